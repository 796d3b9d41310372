import pytest

from mnsd.ground import errors
from mnsd.wire.codec import XMLNS, Node, encode, parse


def test_parse_strips_namespace():
    root = parse(
        f'<?xml version="1.0"?><Message xmlns="{XMLNS}"><MessageBody>a &amp; b</MessageBody>'
        f"<Priority>3</Priority></Message>".encode()
    )
    assert root.tag == "Message"
    assert root.value("MessageBody") == "a & b"
    assert root.value("Priority") == "3"
    assert root.value("Missing") is None


def test_parse_nested_lists():
    root = parse(b"<Messages><Message><A>1</A></Message><Message><A>2</A></Message></Messages>")
    assert [m.value("A") for m in root.all("Message")] == ["1", "2"]
    assert root.text == ""


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<Message><MessageBody>&lol3;</MessageBody></Message>"""


@pytest.mark.parametrize(
    "body",
    [
        BOMB,
        b'<!DOCTYPE x SYSTEM "file:///etc/passwd"><x>&xxe;</x>',
        b"<!DOCTYPE x><x/>",
        b"<Message><MessageBody>unclosed</Message>",
        b"",
        b"not xml at all",
        b"<a></a><b></b>",
    ],
)
def test_malformed(body):
    with pytest.raises(errors.MalformedXML):
        parse(body)


def test_encode_default_namespace_and_escaping():
    out = encode(
        Node(
            "Queue",
            [
                ("Name", "a<b>&c"),
                ("Count", 3),
                ("Flag", True),
                ("Off", False),
                ("Skip", None),
                ("Inner", Node("ignored", [("X", "1")])),
                ("List", [Node("Item", [("V", "1")]), Node("Item", [("V", "2")])]),
            ],
        )
    ).decode()
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert f'<Queue xmlns="{XMLNS}">' in out
    assert "ns0:" not in out
    assert "<Name>a&lt;b&gt;&amp;c</Name>" in out
    assert "<Count>3</Count>" in out
    assert "<Flag>True</Flag>" in out and "<Off>False</Off>" in out
    assert "Skip" not in out
    assert "<Inner><X>1</X></Inner>" in out
    assert "<List><Item><V>1</V></Item><Item><V>2</V></Item></List>" in out
    # And it round-trips through our own parser.
    root = parse(out.encode())
    assert root.value("Name") == "a<b>&c"
    assert [i.value("V") for i in root.child("List").all("Item")] == ["1", "2"]


def test_a_carriage_return_in_text_is_written_as_a_reference_and_read_back():
    """An XML reader turns a bare `\r` into `\n`; written `&#13;` it is read as it was stored."""
    body = "a\r\nb\rc <&>"
    out = encode(Node("Message", [("MessageBody", body)]))
    assert b"\r" not in out and b"a&#13;\nb&#13;c &lt;&amp;&gt;" in out
    assert parse(out).value("MessageBody") == body
