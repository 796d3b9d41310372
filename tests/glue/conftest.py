"""One local SparkSession for the whole tests/glue run (per xdist worker)."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from tests.support.jvm import QUICK_JVM


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    session = (
        SparkSession.builder.master("local[1]")
        .appName("tests-glue")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
