"""Starts the Python SDK's sample push receiver as its launcher does, bound to loopback.

    python run_endpoint.py SDK_TREE PORT [XML|SIMPLE]

SDK_TREE is the SDK's repository tree (push_check.sh unpacks it from the git mirror into the ignored build folder). This runs the shipped launcher
sample/topic/simple_http_notify_endpoint.py's main(ip, port, server.SimpleHttpNotifyEndpoint, msg_type) -- what
`python sample/topic/simple_http_notify_endpoint.py 127.0.0.1 PORT [msg_type]` does -- with one change: the launcher
binds ('', port), every interface, and here the server class binds 127.0.0.1 instead. The request handler,
sample/topic/server.py's SimpleHttpNotifyEndpoint, is used unmodified. Like the launcher, it writes access_log.PORT
and endpoint_log.PORT in the working directory.
"""

import os
import sys

tree, port = sys.argv[1], int(sys.argv[2])
msg_type = sys.argv[3] if len(sys.argv) > 3 else "XML"
sys.path.insert(0, os.path.join(tree, "sample", "topic"))
sys.path.insert(0, tree)

import server  # type: ignore[import-not-found]  # noqa: E402  sample/topic/server.py
import simple_http_notify_endpoint as launcher  # type: ignore[import-not-found]  # noqa: E402


class LoopbackThreadedHTTPServer(server.ThreadedHTTPServer):
    def __init__(self, address, handler):
        super().__init__(("127.0.0.1", address[1]), handler)


server.ThreadedHTTPServer = LoopbackThreadedHTTPServer
launcher.main("127.0.0.1", port, server.SimpleHttpNotifyEndpoint, msg_type)
