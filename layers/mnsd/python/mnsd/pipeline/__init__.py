"""The one request pipeline every plane's calls go through (`steps`), each plane with its own front door: the XML and
JSON planes' route table (`mnsd.request.door`) and the Mns-open OpenAPI's action table (`mnsd.rpc.door`)."""
