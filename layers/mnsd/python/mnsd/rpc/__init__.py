"""The Mns-open OpenAPI (2022-01-19, RPC style): the control plane of Alibaba's current SDKs and of Terraform, served at
`POST /` beside the MNS XML API, on the same services and catalog (a queue made by either plane is the same queue)."""
