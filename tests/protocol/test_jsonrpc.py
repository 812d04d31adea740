"""The JSON-RPC envelope (protocol/jsonrpc.py), call signing (signing.py) and fault codes.

Both directions are covered: requests the platform serves at ``/rpc`` (parse_request and
the replies to them, in both dialects) and replies the platform receives from bots
(decode_reply), which are hostile input.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from merknera.games.base import JSON
from merknera.protocol import jsonrpc, strict_json
from merknera.protocol.faults import ERROR_CODES, FaultKind
from merknera.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    BotRpcError,
    Dialect,
    MalformedReplyError,
    Request,
    RequestError,
    RpcError,
    decode_reply,
    encode_call,
    error_reply,
    parse_request,
    success_reply,
)
from merknera.protocol.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, new_secret, sign, verify

REGISTER = "RegistrationService.Register"


def body(value: object) -> bytes:
    return json.dumps(value).encode("utf-8")


def refused(raw: bytes) -> RequestError:
    with pytest.raises(RequestError) as caught:
        parse_request(raw)
    return caught.value


# -- parse_request: what the platform serves -------------------------------------------------


def test_a_json_rpc_2_request() -> None:
    request = parse_request(body({
        "jsonrpc": "2.0", "method": REGISTER, "params": {"botName": "Bob", "token": "t"},
        "id": 7}))
    assert request == Request(method=REGISTER, params={"botname": "Bob", "token": "t"}, id=7,
                              dialect=Dialect.V2, is_notification=False)


def test_a_merknera_dialect_request() -> None:
    request = parse_request(body({"method": REGISTER, "params": {"BotName": "Bob"}, "id": 1}))
    assert request == Request(method=REGISTER, params={"botname": "Bob"}, id=1,
                              dialect=Dialect.MERKNERA, is_notification=False)


@pytest.mark.parametrize("version", ["1.0", "2", 2.0, None])
def test_anything_but_jsonrpc_2_0_is_the_merknera_dialect(version: JSON) -> None:
    request = parse_request(body({"jsonrpc": version, "method": "M", "id": 1}))
    assert request.dialect is Dialect.MERKNERA


@pytest.mark.parametrize("members", [{"params": None}, {}], ids=["params null", "no params"])
def test_missing_or_null_params_are_an_empty_object(members: dict[str, JSON]) -> None:
    request = parse_request(body({"jsonrpc": "2.0", "method": "Status.Ping", "id": 1, **members}))
    assert request.params == {}


def test_param_keys_are_lower_cased_but_values_are_not() -> None:
    request = parse_request(body({"method": "M", "id": 1, "params": {
        "RPCEndpoint": "http://Example.org/RPC", "nested": {"KeepMe": 1}}}))
    assert request.params == {"rpcendpoint": "http://Example.org/RPC",
                              "nested": {"KeepMe": 1}}


def test_method_names_are_case_sensitive() -> None:
    assert parse_request(body({"method": "registrationservice.register", "id": 1})).method == (
        "registrationservice.register")


def test_keys_differing_only_in_case_are_invalid_params() -> None:
    error = refused(body({"jsonrpc": "2.0", "method": "M", "id": 3,
                          "params": {"botname": "a", "BotName": "b"}}))
    assert error.code == INVALID_PARAMS
    assert '"botname" is given twice' in error.message
    assert error.dialect is Dialect.V2
    assert error.request_id == 3


@pytest.mark.parametrize("params", [[{"botname": "a"}], ["a", "b"], "botname", 4, True],
                         ids=["array of object", "positional", "string", "number", "bool"])
def test_params_that_are_not_an_object_are_invalid_params(params: JSON) -> None:
    error = refused(body({"method": "M", "params": params, "id": "abc"}))
    assert error.code == INVALID_PARAMS
    assert "must be an object" in error.message
    # The reply goes back in the request's dialect, with its id.
    assert error.dialect is Dialect.MERKNERA
    assert error.request_id == "abc"


def test_a_batch_is_an_invalid_request() -> None:
    error = refused(body([{"jsonrpc": "2.0", "method": "M", "id": 1}]))
    assert error.code == INVALID_REQUEST
    assert "batch" in error.message
    assert (error.dialect, error.request_id) == (Dialect.V2, None)


@pytest.mark.parametrize("value", ["M", 1, None, True], ids=["string", "number", "null", "true"])
def test_a_body_that_is_not_an_object_is_an_invalid_request(value: JSON) -> None:
    error = refused(body(value))
    assert error.code == INVALID_REQUEST
    assert "must be a JSON object" in error.message
    assert (error.dialect, error.request_id) == (Dialect.V2, None)


@pytest.mark.parametrize("members", [
    {}, {"method": ""}, {"method": None}, {"method": 1}, {"method": ["M"]}, {"method": {}},
], ids=["missing", "empty", "null", "number", "array", "object"])
def test_method_must_be_a_non_empty_string(members: dict[str, JSON]) -> None:
    error = refused(body({"jsonrpc": "2.0", "id": 9, **members}))
    assert error.code == INVALID_REQUEST
    assert '"method" must be a non-empty string' in error.message
    assert (error.dialect, error.request_id) == (Dialect.V2, 9)


@pytest.mark.parametrize("request_id", [True, False, {"n": 1}, [1]],
                         ids=["true", "false", "object", "array"])
@pytest.mark.parametrize("dialect", [Dialect.V2, Dialect.MERKNERA], ids=lambda d: d.name)
def test_bad_id_types_are_invalid_requests(request_id: JSON, dialect: Dialect) -> None:
    message: dict[str, JSON] = {"method": "M", "id": request_id}
    if dialect is Dialect.V2:
        message["jsonrpc"] = "2.0"
    error = refused(body(message))
    assert error.code == INVALID_REQUEST
    assert '"id" must be a number, a string or null' in error.message
    assert error.dialect is dialect
    assert error.request_id is None


@pytest.mark.parametrize("request_id", [0, 12, -3, 1.5, "abc", "", None],
                         ids=["0", "int", "negative", "float", "string", "empty string", "null"])
def test_good_ids_are_kept(request_id: JSON) -> None:
    request = parse_request(body({"jsonrpc": "2.0", "method": "M", "id": request_id}))
    assert request.id == request_id
    assert type(request.id) is type(request_id)
    assert request.is_notification is False


@pytest.mark.parametrize("version", ["2.0", None], ids=["2.0", "merknera"])
def test_a_request_without_id_is_a_notification(version: str | None) -> None:
    message: dict[str, JSON] = {"method": "M", "params": {}}
    if version:
        message["jsonrpc"] = version
    request = parse_request(body(message))
    assert request.is_notification is True
    assert request.id is None


@pytest.mark.parametrize("raw", [
    b"", b"{", b'{"method": "M",}', b"{'method': 'M'}", b"\xef\xbb\xbf{}", b"nul",
    b'{"method": "M"} trailing',
], ids=["empty", "unclosed", "trailing comma", "single quotes", "BOM", "partial literal",
        "trailing text"])
def test_malformed_json_is_a_parse_error_in_the_2_0_dialect(raw: bytes) -> None:
    error = refused(raw)
    assert error.code == PARSE_ERROR
    assert error.message.startswith("Parse error: ")
    assert (error.dialect, error.request_id) == (Dialect.V2, None)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(constant: str) -> None:
    error = refused(b'{"method": "M", "id": 1, "params": {"x": ' + constant.encode() + b"}}")
    assert error.code == PARSE_ERROR
    assert constant in error.message


@pytest.mark.parametrize("raw", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    b'{"method": "M", "id": 1, "params": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
], ids=["arrays", "objects", "inside params"])
def test_deep_nesting_is_refused_without_crashing(raw: bytes) -> None:
    error = refused(raw)
    assert error.code == PARSE_ERROR
    assert "nested too deeply" in error.message


def test_a_huge_integer_is_a_parse_error() -> None:
    error = refused(b'{"method": "M", "id": ' + b"9" * 5000 + b"}")
    assert error.code == PARSE_ERROR


@pytest.mark.parametrize("raw", [
    b'{"method": "\xff", "id": 1}', b'{"method": "M\xc3", "id": 1}', b"\x80",
    b'{"method": "\xed\xa0\x80", "id": 1}',
], ids=["0xff", "truncated sequence", "lone continuation byte", "encoded surrogate"])
def test_invalid_utf8_is_a_parse_error(raw: bytes) -> None:
    error = refused(raw)
    assert error.code == PARSE_ERROR
    assert "not UTF-8" in error.message


def test_unicode_is_kept() -> None:
    request = parse_request(body({"method": "M", "id": "é", "params": {"Name": "Zoë ☃"}}))
    assert request.params == {"name": "Zoë ☃"}
    assert request.id == "é"


# -- replies to requests ---------------------------------------------------------------------


def test_success_reply_in_2_0() -> None:
    assert success_reply(Dialect.V2, 5, {"message": "hi"}) == {
        "jsonrpc": "2.0", "result": {"message": "hi"}, "id": 5}


def test_success_reply_in_merknera_dialect() -> None:
    assert success_reply(Dialect.MERKNERA, "x", {"message": "hi"}) == {
        "result": {"message": "hi"}, "error": None, "id": "x"}


def test_error_reply_in_2_0_is_an_object_with_a_code() -> None:
    error = RpcError(METHOD_NOT_FOUND, 'Method not found: "Nope"')
    assert error_reply(Dialect.V2, 5, error) == {
        "jsonrpc": "2.0", "error": {"code": -32601, "message": 'Method not found: "Nope"'},
        "id": 5}


def test_error_reply_in_merknera_dialect_is_a_string_and_result_null() -> None:
    error = RpcError(INTERNAL_ERROR, "Internal error")
    reply = error_reply(Dialect.MERKNERA, 5, error)
    assert reply == {"result": None, "error": "Internal error", "id": 5}
    assert "jsonrpc" not in reply


def test_a_request_error_answers_in_its_own_dialect() -> None:
    error = refused(body({"method": "M", "id": 4, "params": [1]}))
    reply = error_reply(error.dialect, error.request_id, error)
    assert reply == {"result": None, "error": error.message, "id": 4}
    assert json.loads(strict_json.dumps(reply)) == reply


def test_standard_codes() -> None:
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700, -32600, -32601, -32602, -32603)


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc": "2.0", "method": "M", "id": "\\ud800"}',
    b'{"jsonrpc": "2.0", "method": "M", "params": {"botname": "x\\udc00"}, "id": 1}',
], ids=["in the id", "in a param"])
def test_a_lone_surrogate_cannot_break_the_reply(raw: bytes) -> None:
    # Python would decode the escape into a str that cannot be encoded again, so the id
    # could not be echoed: the request is refused as unparsable, and the reply (made as
    # /rpc makes it) carries a null id and encodes.
    error = refused(raw)
    assert (error.code, error.dialect, error.request_id) == (PARSE_ERROR, Dialect.V2, None)
    assert json.loads(strict_json.dumps(error_reply(error.dialect, error.request_id, error))) == {
        "jsonrpc": "2.0", "id": None, "error": {
            "code": PARSE_ERROR,
            "message": "Parse error: the body is not JSON: it holds an unpaired UTF-16 "
                       "surrogate escape"}}


# -- calls to bots and their replies ---------------------------------------------------------


def test_encode_call() -> None:
    raw = encode_call("TicTacToe.NextMove", {"gameid": 42, "mark": "X"}, 17)
    assert json.loads(raw) == {"jsonrpc": "2.0", "method": "TicTacToe.NextMove",
                               "params": {"gameid": 42, "mark": "X"}, "id": 17}
    assert b" " not in raw
    assert json.loads(encode_call("Status.Ping", None, "p-1")) == {
        "jsonrpc": "2.0", "method": "Status.Ping", "params": None, "id": "p-1"}


@pytest.mark.parametrize("reply", [
    {"jsonrpc": "2.0", "result": {"position": 4}, "id": 1},
    {"result": {"position": 4}, "error": None, "id": 1},
    {"result": {"position": 4}, "id": 1},
    {"jsonrpc": "2.0", "result": {"position": 4}, "error": None, "id": 1},
], ids=["2.0", "merknera", "merknera without error", "2.0 with error null"])
def test_accepted_replies(reply: JSON) -> None:
    assert decode_reply(body(reply), 1) == {"position": 4}


@pytest.mark.parametrize("result", [None, 0, "", [], False], ids=repr)
def test_a_falsy_result_is_still_a_result(result: JSON) -> None:
    assert decode_reply(body({"jsonrpc": "2.0", "result": result, "id": "a"}), "a") == result


def test_string_ids_are_matched() -> None:
    assert decode_reply(body({"result": 1, "id": "req-9"}), "req-9") == 1


def malformed(raw: bytes, request_id: int | str = 1) -> str:
    with pytest.raises(MalformedReplyError) as caught:
        decode_reply(raw, request_id)
    assert not isinstance(caught.value, BotRpcError)
    return str(caught.value)


@pytest.mark.parametrize(("reply_id", "request_id"), [
    (2, 1), ("1", 1), (1, "1"), (True, 1), (1.0, 1), (None, 1), ("a", "b"), ([1], 1),
], ids=["other int", "string for int", "int for string", "true for 1", "1.0 for 1", "null",
        "other string", "array"])
def test_a_reply_id_must_echo_the_request_id(reply_id: JSON, request_id: int | str) -> None:
    message = malformed(body({"jsonrpc": "2.0", "result": 1, "id": reply_id}), request_id)
    assert f'the reply "id" {json.dumps(reply_id)} does not match the request id' in message
    assert repr(request_id) in message


def test_a_reply_without_id_is_malformed() -> None:
    assert malformed(body({"jsonrpc": "2.0", "result": 1})) == 'the reply has no "id"'


def test_a_reply_without_result_is_malformed() -> None:
    assert malformed(body({"jsonrpc": "2.0", "id": 1})) == (
        'the reply has neither "result" nor "error"')
    assert "neither" in malformed(body({"error": None, "id": 1}))


@pytest.mark.parametrize("version", ["1.0", 2.0, None, ""], ids=repr)
def test_jsonrpc_member_must_be_2_0_when_present(version: JSON) -> None:
    message = malformed(body({"jsonrpc": version, "result": 1, "id": 1}))
    assert message.startswith('"jsonrpc" must be "2.0"')
    assert json.dumps(version) in message


@pytest.mark.parametrize(("value", "kind"), [
    ([{"result": 1, "id": 1}], "an array"), ("OK", "a string"), (1, "a number"),
    (None, "null"), (True, "a boolean"),
], ids=["batch", "string", "number", "null", "true"])
def test_a_reply_that_is_not_an_object_is_malformed(value: JSON, kind: str) -> None:
    assert malformed(body(value)) == f"the reply must be a JSON object, got {kind}"


@pytest.mark.parametrize("raw", [b"", b"   ", b"<html>502</html>", b'{"result": 1, "id": 1'],
                         ids=["empty", "blank", "html", "truncated"])
def test_a_reply_that_is_not_json_is_malformed(raw: bytes) -> None:
    assert malformed(raw).startswith("the body is not JSON")


def test_a_reply_that_is_not_utf8_is_malformed() -> None:
    message = malformed(b'{"result": "\xff\xfe", "id": 1}')
    assert message.startswith("the body is not JSON: it is not UTF-8")
    assert "byte 12" in message


def test_a_deeply_nested_reply_is_malformed() -> None:
    raw = b'{"id": 1, "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert "nested too deeply" in malformed(raw)


def test_a_reply_with_nan_is_malformed() -> None:
    assert "NaN" in malformed(b'{"id": 1, "result": {"position": NaN}}')


def bot_error(reply: JSON) -> str:
    with pytest.raises(BotRpcError) as caught:
        decode_reply(body(reply), 1)
    return str(caught.value)


def test_an_error_string_is_a_bot_error() -> None:
    assert bot_error({"result": None, "error": "I give up", "id": 1}) == "I give up"


def test_an_empty_error_string_is_still_a_bot_error() -> None:
    assert bot_error({"result": None, "error": "", "id": 1}) == "(empty error string)"


def test_an_error_object_is_a_bot_error_with_its_code() -> None:
    assert bot_error({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"},
                      "id": 1}) == "Method not found (code -32601)"


def test_an_error_object_without_a_code_or_message() -> None:
    assert bot_error({"jsonrpc": "2.0", "error": {"message": "oops"}, "id": 1}) == "oops"
    assert bot_error({"jsonrpc": "2.0", "error": {"code": 5}, "id": 1}) == "null (code 5)"


def test_an_error_wins_over_a_result() -> None:
    assert bot_error({"result": {"position": 4}, "error": "bad", "id": 1}) == "bad"


def test_a_long_error_is_clipped() -> None:
    text = bot_error({"jsonrpc": "2.0", "error": {"code": 1, "message": ["x" * 1000]}, "id": 1})
    assert len(text) < 200
    assert "..." in text


def test_reply_errors_are_bot_reply_errors() -> None:
    assert issubclass(MalformedReplyError, jsonrpc.BotReplyError)
    assert issubclass(BotRpcError, jsonrpc.BotReplyError)
    assert not issubclass(MalformedReplyError, BotRpcError)


# -- signing ---------------------------------------------------------------------------------


def test_signature_matches_an_independent_hmac() -> None:
    secret = "5e3c" * 16
    timestamp = "1700000000"
    raw = encode_call("TicTacToe.NextMove", {"gameid": 1}, 1)
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + raw, hashlib.sha256)
    assert sign(secret, timestamp, raw) == "sha256=" + expected.hexdigest()


@pytest.mark.parametrize("key_length", [0, 1, 63, 64, 65, 200])
@pytest.mark.parametrize("body_length", [0, 2, 5000])
def test_signature_for_keys_about_the_block_size(key_length: int, body_length: int) -> None:
    # sign writes HMAC out over hashes keyed once: keys shorter than SHA-256's 64-byte
    # block are padded, longer ones hashed first; bodies of 2 KiB and more are hashed
    # by another path of hashlib's.
    secret = ("0123456789abcdef" * 13)[:key_length]
    raw = bytes(range(256)) * (body_length // 256) + b"x" * (body_length % 256)
    expected = hmac.new(secret.encode(), b"1700000000." + raw, hashlib.sha256).hexdigest()
    assert sign(secret, "1700000000", raw) == f"sha256={expected}"


KNOWN_DIGEST = "b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
"""HMAC-SHA256(key=b"secret", msg=b"1700000000.{}"), computed once with hmac and pinned."""


def test_a_known_vector() -> None:
    assert hmac.new(b"secret", b"1700000000.{}", hashlib.sha256).hexdigest() == KNOWN_DIGEST
    assert sign("secret", "1700000000", b"{}") == f"sha256={KNOWN_DIGEST}"
    assert verify("secret", "1700000000", b"{}", f"sha256={KNOWN_DIGEST}")


def test_verify() -> None:
    secret, timestamp, raw = new_secret(), "1700000000", b'{"id":1}'
    signature = sign(secret, timestamp, raw)
    assert verify(secret, timestamp, raw, signature)
    assert not verify(secret, timestamp, raw + b" ", signature)
    assert not verify(secret, "1700000001", raw, signature)
    assert not verify(new_secret(), timestamp, raw, signature)
    assert not verify(secret, timestamp, raw, signature.removeprefix("sha256="))
    assert not verify(secret, timestamp, raw, "")


def test_secrets_are_fresh_hex() -> None:
    secrets = {new_secret() for _ in range(20)}
    assert len(secrets) == 20
    for secret in secrets:
        assert len(secret) == 64
        int(secret, 16)


def test_header_names() -> None:
    assert (TIMESTAMP_HEADER, SIGNATURE_HEADER) == ("X-Merknera-Timestamp",
                                                   "X-Merknera-Signature")


# -- fault codes -----------------------------------------------------------------------------


def test_every_fault_kind_has_a_distinct_error_code() -> None:
    codes = [kind.error_code for kind in FaultKind]
    assert set(ERROR_CODES) == set(FaultKind)
    assert len(set(codes)) == len(codes)
    assert all(isinstance(code, int) and not isinstance(code, bool) for code in codes)


@pytest.mark.parametrize(("kind", "code"), [
    (FaultKind.TIMEOUT, 1), (FaultKind.UNREACHABLE, 2), (FaultKind.HTTP_STATUS, 3),
    (FaultKind.MALFORMED_REPLY, 4), (FaultKind.RPC_ERROR, 5), (FaultKind.INVALID_MOVE, 6),
    (FaultKind.ILLEGAL_MOVE, 7), (FaultKind.NOT_READY, 8),
], ids=lambda value: value.name if isinstance(value, FaultKind) else str(value))
def test_fault_codes_are_as_documented_in_the_readme(kind: FaultKind, code: int) -> None:
    assert kind.error_code == code


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc": "2.0", "error": "\\udc00", "id": 1}',
    b'{"jsonrpc": "2.0", "error": {"code": 1, "message": "\\udc00"}, "id": 1}',
    b'{"jsonrpc": "\\udc00", "result": 1, "id": 1}',
    b'{"jsonrpc": "2.0", "result": 1, "id": "\\udc00"}',
], ids=["error string", "error message", "jsonrpc member", "id"])
def test_fault_messages_from_a_reply_are_always_utf8(raw: bytes) -> None:
    with pytest.raises(jsonrpc.BotReplyError) as caught:
        decode_reply(raw, 1)
    str(caught.value).encode("utf-8")
