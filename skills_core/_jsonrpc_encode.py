"""What a JSON-RPC endpoint writes: strict encoding, results encoded once, and answers.

Theory of operation: every byte :mod:`skills_core.jsonrpc` writes goes through
:func:`encode_text`, which refuses anything that is not plain JSON (no silent coercion of keys,
no NaN, no lone surrogates) and escapes the line separators JSON leaves raw. A server's handler
answers a request with an :data:`Answer`: a result object, a result encoded once before
(:class:`EncodedResult`, spliced into any number of responses), or an :class:`ErrorObject`. This
module defines those values; :mod:`skills_core.jsonrpc` documents and exports them, and its
``JsonRpcConnection.send_answer`` turns one into the bytes of a response.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, final

from ._fast import new_blank, slot_setters
from ._jsonrpc_events import JSONObject, JsonRpcErrorKind, RequestId, is_request_id
from .errors import LocalProtocolError, quote_for_message
from .jsonvalue import JSONValue

__all__ = ["EncodedResult", "encode_result", "ErrorObject", "Answer"]

# One encoder for every message: json.dumps with keyword arguments builds a new one per call.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _to_json(value: object) -> JSONValue:
    """Return ``value`` as plain JSON data, or raise LocalProtocolError (no silent coercion)."""
    if value is None or isinstance(value, str | int):  # bool is an int
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _not_serializable(f"{value!r} is not a JSON number")
    if isinstance(value, Mapping):
        obj: JSONObject = {}
        for key, item in value.items():
            # json.dumps would silently turn 1, 1.5, True and None keys into strings, and
            # {1: a, "1": b} into an object with a duplicate key.
            if not isinstance(key, str):
                raise _not_serializable(
                    f"object key {quote_for_message(key)} is {type(key).__name__}, not str"
                )
            obj[key] = _to_json(item)
        return obj
    # Tuples are accepted as arrays, as json.dumps does: nothing is lost in the JSON data model.
    if isinstance(value, list | tuple):
        return [_to_json(item) for item in value]
    raise _not_serializable(f"a Python {type(value).__name__} is not a JSON value")


def _not_serializable(message: str) -> LocalProtocolError:
    return LocalProtocolError(f"cannot send: {message}", kind=JsonRpcErrorKind.NOT_SERIALIZABLE)


def invalid_argument(message: str) -> LocalProtocolError:
    return LocalProtocolError(message, kind=JsonRpcErrorKind.INVALID_ARGUMENT)


def check_request_id(request_id: object) -> RequestId:
    if is_request_id(request_id):
        return request_id
    raise invalid_argument(f"a request id must be a str or an int, not {type(request_id).__name__}")


def check_method(method: object) -> str:
    if not isinstance(method, str):
        raise invalid_argument(f"a method name must be a str, not {type(method).__name__}")
    # The plain value of a str subclass: str() would give "M.X" for a (str, Enum) member.
    return str.__str__(method)


def check_object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise invalid_argument(
            f"{what} must be a mapping (MCP uses named members only), not {type(value).__name__}"
        )
    return value


#: Line separators that JSON leaves unescaped but str.splitlines() and JavaScript-era tools split
#: on. json.dumps emits them only inside strings, where the escape means the same character.
_UNSAFE_SEPARATORS: Final = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def encode_text(value: object, check_keys: bool) -> bytes:
    """The compact UTF-8 JSON of ``value`` (raises LocalProtocolError), with no size check."""
    try:
        text = _ENCODER.encode(_to_json(value) if check_keys else value)
        for char, escape in _UNSAFE_SEPARATORS:
            if char in text:
                text = text.replace(char, escape)
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _not_serializable("a string contains a lone surrogate") from exc
    except ValueError as exc:
        raise _not_serializable(quote_for_message(str(exc))) from exc
    except RecursionError as exc:
        raise _not_serializable("the value is nested too deeply, or contains itself") from exc
    except TypeError as exc:  # only without check_keys: _to_json refuses these itself
        raise _not_serializable(quote_for_message(str(exc))) from exc


@final
class EncodedResult:
    """A result object encoded once, to be sent in any number of responses.

    Made only by :func:`encode_result`, so its bytes are always the compact JSON object this module
    would write for the same result; ``JsonRpcConnection.send_response`` splices them into a
    response without encoding the result again. A server that answers the same request many times
    (the same file read over and over) saves most of the cost of a response this way.
    """

    __slots__ = ("_json",)

    _json: bytes

    def __init__(self) -> None:
        raise TypeError("EncodedResult is made by encode_result(), not directly")

    @property
    def json(self) -> bytes:
        """The encoded result object: compact UTF-8 JSON, no line break."""
        return self._json

    def __len__(self) -> int:
        """Length of :attr:`json` in bytes."""
        return len(self._json)

    def __repr__(self) -> str:
        return f"<EncodedResult of {len(self._json)} bytes>"


def encode_result(result: Mapping[str, object], *, check_keys: bool = True) -> EncodedResult:
    """Encode a result object once, for ``JsonRpcConnection.send_response`` to reuse.

    Args:
        result: The result object, exactly as ``send_response`` would take it.
        check_keys: As in ``JsonRpcConnection.send_response``.

    Raises:
        LocalProtocolError: ``result`` is not a mapping, or a value is not plain JSON. (The
            message-size cap is a connection's, so ``send_response`` checks it.)
    """
    return _new_encoded(encode_text(check_object(result, "a result"), check_keys))


(_SET_JSON,) = slot_setters(EncodedResult, "_json")


def _new_encoded(data: bytes) -> EncodedResult:
    """The trusted constructor of an :class:`EncodedResult` (see :mod:`skills_core._fast`), the
    one way to make one (its ``__init__`` refuses): from bytes this module encoded."""
    encoded: EncodedResult = new_blank(EncodedResult)
    _SET_JSON(encoded, data)
    return encoded


#: Characters of a spliced string escaped per step. Each step is one C call that holds the GIL, so
#: a thread that encodes a 16 MiB file lets an event loop in another thread run between steps,
#: instead of once the whole file is done (``tests/benchmarks/bench_loop_latency.py`` measures the
#: longest stall).
_SPLICE_STEP: Final = 1 << 18


def encode_spliced(
    result: Mapping[str, object], holder: dict[str, JSONValue], member: str
) -> EncodedResult:
    """``encode_result(result)`` for a result that carries one large string, at fewer copies.

    ``holder`` is the object inside ``result`` whose ``member`` is that string (a file's text or
    base64). The string is taken out of it (``holder`` is left with ``""`` there), escaped on its
    own, a step at a time, and spliced into the encoding of the rest: the same bytes, while two
    copies of the string are alive at the peak, plus one step's worth (the generic encoder keeps
    three or four: the original, escaped, joined, encoded), and no single step holds the GIL for
    long (see :data:`_SPLICE_STEP`). Inside JSON strings quotes are escaped, so ``"member":""`` can
    only be the member itself, which must occur once. Escaping is per character, so the string
    can be cut anywhere: a ``str`` holds code points, never half of a surrogate pair.

    Raises:
        LocalProtocolError: ``result`` is not plain JSON, or ``member`` is not a string in it.
    """
    value = holder.get(member)
    if not isinstance(value, str):
        raise _not_serializable(f"{member!r} must be a string to be spliced")
    holder[member] = ""
    head = encode_text(result, False)
    needle = encode_text(member, False) + b':""'
    at = head.find(needle)
    if at < 0 or head.find(needle, at + 1) >= 0:
        raise _not_serializable(f"the result must have exactly one member {member!r}")
    cut = at + len(needle) - 1  # just inside the quotes of the empty string
    parts = [head[:cut]]
    for start in range(0, len(value), _SPLICE_STEP):
        escaped = _ENCODER.encode(value[start : start + _SPLICE_STEP])[1:-1]  # without quotes
        for char, escape in _UNSAFE_SEPARATORS:
            if char in escaped:
                escaped = escaped.replace(char, escape)
        try:
            parts.append(escaped.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise _not_serializable("a string contains a lone surrogate") from exc
    del value  # the original is freed here: holder no longer refers to it
    parts.append(head[cut:])
    return _new_encoded(b"".join(parts))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorObject:
    """A JSON-RPC error object to send instead of a result (JSON-RPC 2.0 §5.1).

    What a request handler answers when a request fails; the transport adds the id (a stream) or
    picks an HTTP status from :attr:`code` (HTTP) and sends it.

    Attributes:
        code: The error code: an :class:`~skills_core.spec.ErrorCode` member, or any integer.
        message: One sentence describing the error.
        data: Extra JSON data, or ``None`` to leave ``data`` out.

    Raises:
        LocalProtocolError: ``code`` is not an int (a bool is not), or ``message`` not a str.
    """

    code: int
    message: str
    data: JSONValue = None

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or isinstance(self.code, bool):
            raise invalid_argument(f"an error code must be an int, not {type(self.code).__name__}")
        if not isinstance(self.message, str):
            raise invalid_argument(
                f"an error message must be a str, not {type(self.message).__name__}"
            )

    def to_json(self) -> dict[str, JSONValue]:
        """The error object as JSON: ``code``, ``message`` and, when not ``None``, ``data``."""
        error: dict[str, JSONValue] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


#: A request handler's answer: the result object, a result encoded before, or an error.
Answer: TypeAlias = dict[str, JSONValue] | EncodedResult | ErrorObject


def encode_response(
    request_id: RequestId | None,
    answer: Mapping[str, object] | EncodedResult | ErrorObject,
    check_keys: bool,
    end: bytes = b"",
) -> bytes:
    """The bytes of the response carrying ``answer``, then ``end`` (no size check).

    Raises:
        LocalProtocolError: the id or the answer is not plain JSON.
    """
    if type(answer) is EncodedResult:
        # The bytes the dict below would encode to, key order included.
        if type(request_id) is int and -(1 << 53) < request_id < 1 << 53:
            encoded_id = str(request_id).encode()  # what json writes, without its overhead
        else:
            encoded_id = encode_text(check_request_id(request_id), False)
        # One join, one copy of a result that may be tens of megabytes.
        return b"".join(
            (b'{"jsonrpc":"2.0","id":', encoded_id, b',"result":', answer._json, b"}", end)
        )
    if type(answer) is ErrorObject:
        if request_id is not None:
            check_request_id(request_id)
        response = {"jsonrpc": "2.0", "id": request_id, "error": answer.to_json()}
        return encode_text(response, True) + end
    message: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": check_request_id(request_id),
        "result": check_object(answer, "a result"),
    }
    return encode_text(message, check_keys) + end
