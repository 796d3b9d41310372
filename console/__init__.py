"""The web console: static files (`static/`) and the code that serves them, locally and on AWS."""
