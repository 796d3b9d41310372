"""The local runtime: the Lambda handlers served over HTTP on an embedded (moto) backend."""
