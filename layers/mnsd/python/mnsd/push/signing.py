"""Signing of HTTP pushes, as the spec's "Endpoint签名认证" describes.

The receiver rebuilds `METHOD\\nContent-MD5\\nContent-Type\\nDate\\n` + the `x-mns-*` headers (lower-case
names, sorted, `name:value\\n` each) + the request path, and checks the base64 `Authorization`
header as a sha1WithRSAEncryption signature with the public key of the certificate found at the
base64-decoded `x-mns-signing-cert-url`.
"""

from __future__ import annotations

import base64
import datetime
from functools import lru_cache
from typing import Any

# `cryptography` is imported where it is used: every API function imports this module (for the
# certificate route), and only the delivery functions sign.

CERTIFICATE_PATH = "/certificates/push-signing.pem"


def string_to_sign(method: str, headers: dict[str, str], resource: str) -> str:
    lower = {name.lower(): value for name, value in headers.items()}
    mns_headers = "".join(f"{name}:{lower[name]}\n" for name in sorted(lower) if name.startswith("x-mns-"))
    return "\n".join(
        [method, lower.get("content-md5", ""), lower.get("content-type", "").lower(), lower.get("date", "")]
    ) + ("\n" + mns_headers + resource)


@lru_cache(maxsize=4)
def _private_key(key_pem: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = serialization.load_pem_private_key(key_pem.encode("ascii"), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return key


def sign(key_pem: str, text: str) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signature = _private_key(key_pem).sign(text.encode("utf-8"), padding.PKCS1v15(), hashes.SHA1())
    return base64.b64encode(signature).decode("ascii")


def generate_signing_material(common_name: str = "MNS push signing") -> tuple[str, str]:
    """A new RSA-2048 key and a self-signed certificate for it, both PEM: (private key, certificate)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode("ascii")
    return key_pem, certificate_of(key_pem, common_name)


def certificate_of(key_pem: str, common_name: str = "MNS push signing") -> str:
    """A self-signed certificate (PEM) of the key, valid ten years from yesterday."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    key = _private_key(key_pem)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode("ascii")
