"""The JVM options the tests start Spark with: short sessions over small data, so the JIT's first tier only and the
serial collector (about half the CPU of a session's start and its jobs, the same answers)."""

QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
