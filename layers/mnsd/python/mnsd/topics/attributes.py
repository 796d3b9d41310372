"""A published message's mail and SMS attributes, in either generation's words.

The Python SDK and Java SDK 1.x send `DirectMail` and `DirectSMS`; Java SDK 2.x sends `DM` and `DYSMS` in their
place (`DmAttributes`, `DysmsAttributes`, written by Gson with upper-camel-case names and booleans as 1/0):

- `DM`: `{"MailAddress": "...", "Subject": "...", "IsHtml": 1}`. A mail subscription fixes the recipient
  (`mail:directmail:{address}`), so the address a DM names is the one it is sent from, as DirectMail's
  `AccountName` is (on AWS, an identity SES has verified).
- `DYSMS`: `{"PhoneNumber": "13800000000"}`: the number an anonymous SMS subscription (`sms:directsms:anonymous`)
  sends to, as DirectSMS's `Receiver` is; a subscription naming its number sends there. The text is the body.

Each is checked as its older twin is (a JSON object, else `400 InvalidArgument`), and kept in the older twin's
terms, so one delivery serves both (`mnsd.push.delivery`). A message may carry one of each pair, not both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mnsd.ground import errors
from mnsd.model.inputs import PublishInput, json_attribute

_PHONE_NUMBER = re.compile(r"\+?[0-9]{5,20}")


def _either(
    older: tuple[str | None, str], newer: tuple[str | None, str], translate: Callable[[dict], dict]
) -> dict | None:
    """The older attribute (text, name), or the newer one translated into its terms; each a JSON object, not both."""
    old, new = json_attribute(*older), json_attribute(*newer)
    if old is not None and new is not None:
        raise errors.InvalidArgument(f"A message carries {older[1]} or {newer[1]}, not both.")
    return old if new is None else translate(new)


def _mail_of_dm(dm: dict) -> dict:
    found: dict[str, Any] = {"IsHtml": 1 if str(dm.get("IsHtml", 0)).lower() in ("1", "true") else 0}
    if dm.get("MailAddress") is not None:
        found["AccountName"] = dm["MailAddress"]
    if dm.get("Subject") is not None:
        found["Subject"] = dm["Subject"]
    return found


def _sms_of_dysms(dysms: dict) -> dict:
    phone = dysms.get("PhoneNumber")
    if phone is None:
        return {"Type": "singleContent"}
    if not isinstance(phone, str) or not _PHONE_NUMBER.fullmatch(phone):
        raise errors.InvalidArgument("The PhoneNumber of the DYSMS attribute should be a phone number (digits).")
    return {"Type": "singleContent", "Receiver": phone}


def direct_mail(given: PublishInput) -> dict | None:
    """The message's DirectMail attribute, or its DM in DirectMail's terms."""
    return _either((given.direct_mail, "DirectMail"), (given.dm, "DM"), _mail_of_dm)


def direct_sms(given: PublishInput) -> dict | None:
    """The message's DirectSMS attribute, or its DYSMS in DirectSMS's terms (a single text to its PhoneNumber)."""
    return _either((given.direct_sms, "DirectSMS"), (given.dysms, "DYSMS"), _sms_of_dysms)
