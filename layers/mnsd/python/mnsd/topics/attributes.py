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
from typing import Any

from mnsd import errors
from mnsd.topics.model import PublishInput, json_attribute

_PHONE_NUMBER = re.compile(r"\+?[0-9]{5,20}")


def _one_of(older: dict | None, newer: dict | None, names: str) -> None:
    if older is not None and newer is not None:
        raise errors.InvalidArgument(f"A message carries {names}, not both.")


def direct_mail(given: PublishInput) -> dict | None:
    """The message's DirectMail attribute, or its DM in DirectMail's terms."""
    mail = json_attribute(given.direct_mail, "DirectMail")
    dm = json_attribute(given.dm, "DM")
    _one_of(mail, dm, "DirectMail or DM")
    if dm is None:
        return mail
    found: dict[str, Any] = {"IsHtml": 1 if str(dm.get("IsHtml", 0)).lower() in ("1", "true") else 0}
    if dm.get("MailAddress") is not None:
        found["AccountName"] = dm["MailAddress"]
    if dm.get("Subject") is not None:
        found["Subject"] = dm["Subject"]
    return found


def direct_sms(given: PublishInput) -> dict | None:
    """The message's DirectSMS attribute, or its DYSMS in DirectSMS's terms (a single text to its PhoneNumber)."""
    sms = json_attribute(given.direct_sms, "DirectSMS")
    dysms = json_attribute(given.dysms, "DYSMS")
    _one_of(sms, dysms, "DirectSMS or DYSMS")
    if dysms is None:
        return sms
    phone = dysms.get("PhoneNumber")
    if phone is None:
        return {"Type": "singleContent"}
    if not isinstance(phone, str) or not _PHONE_NUMBER.fullmatch(phone):
        raise errors.InvalidArgument("The PhoneNumber of the DYSMS attribute should be a phone number (digits).")
    return {"Type": "singleContent", "Receiver": phone}
