"""The OpenAPI's account actions (its logging settings, mapped onto the account's LoggingBucket) and endpoint actions
(`mnsd.control.endpoint_acl`: the account's public endpoint and its source-address allow-list)."""

from __future__ import annotations

from typing import Any

from mnsd.control import endpoint_acl as endpoints
from mnsd.ground import errors
from mnsd.ground.validation import mns_bool
from mnsd.rpc.call import RpcCall


def get_account_attributes(call: RpcCall) -> Any:
    attributes = call.services.accounts.attributes(call.owner)
    return {
        "LogEnabled": bool(attributes.logging_bucket),
        "ProjectName": attributes.logging_bucket,
        "LogStoreName": attributes.log_store,
        "MessageTraceEnabled": False,
    }


def set_account_attributes(call: RpcCall) -> Any:
    """LogEnabled with ProjectName sets the account's LoggingBucket (the operation log's destination on the XML
    plane, GetAccountAttributes' `LoggingBucket`); LogEnabled false clears it. Message traces are not offered."""
    trace = call.flag("MessageTraceEnabled")
    if trace is not None and mns_bool("MessageTraceEnabled", trace):
        raise errors.InvalidArgument("Message traces are not offered here; the operation log is (LogEnabled).")
    current = call.services.accounts.attributes(call.owner)
    enabled = call.flag("LogEnabled")
    bucket = call.text("ProjectName")
    store = call.text("LogStoreName")
    if enabled is not None and not mns_bool("LogEnabled", enabled):
        bucket, store = "", ""
    elif enabled is not None and not (bucket or current.logging_bucket):
        raise errors.InvalidArgument("LogEnabled needs a ProjectName: where the operation log goes.")
    call.services.accounts.set_logging(
        call.owner,
        current.logging_bucket if bucket is None else bucket,
        current.log_store if store is None else store,
    )
    return None


def get_endpoint_attribute(call: RpcCall) -> Any:
    endpoints.endpoint_type(call.required("EndpointType"))
    state = call.services.endpoints.state(call.owner, fresh=True)
    return {
        "EndpointEnabled": state.enabled,
        "CidrList": [{"Cidr": e.cidr, "AclStrategy": e.strategy, "CreateTime": e.create_time} for e in state.acl],
    }


def enable_endpoint(call: RpcCall) -> Any:
    endpoints.endpoint_type(call.required("EndpointType"))
    call.services.endpoints.set_enabled(call.owner, True)
    return None


def disable_endpoint(call: RpcCall) -> Any:
    endpoints.endpoint_type(call.required("EndpointType"))
    call.services.endpoints.set_enabled(call.owner, False)
    return None


def authorize_endpoint_acl(call: RpcCall) -> Any:
    endpoints.endpoint_type(call.required("EndpointType"))
    endpoints.acl_strategy(call.required("AclStrategy"))
    call.services.endpoints.authorize(call.owner, endpoints.cidr_blocks(call.required("CidrList")))
    return None


def revoke_endpoint_acl(call: RpcCall) -> Any:
    endpoints.endpoint_type(call.required("EndpointType"))
    endpoints.acl_strategy(call.required("AclStrategy"))
    call.services.endpoints.revoke(call.owner, endpoints.cidr_blocks(call.required("CidrList")))
    return None
