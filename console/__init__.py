"""The web console: static files (`static/`) and the code that serves them, locally and on AWS.

On AWS the console's function is this package alone (its code asset), with `console.handler` as its handler.
"""

from console.assets import handler

__all__ = ["handler"]
