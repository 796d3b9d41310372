"""The tools' one client of MNS (`python -m migrate`, `python -m admin`, the local runtime's analytics export): the
transport (`transport`), the signatures (`signing`, by the layer's own implementation), the error and its fault
(`errors`), retries (`retrying`), the XML API (`xml`; its message calls in `messages`, the resource calls in
`resources`) and the Mns-open OpenAPI (`openapi`). `docs/layout.md`, "The tools' client"."""
