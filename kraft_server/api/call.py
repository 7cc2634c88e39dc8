"""What a handler is given: one request on its way to its answer (``Call``).

The connection's ``InboundCall`` (``net/pipeline.py``) is one; so is an enveloped
request (``envelope_inner.InnerCall``) and a call the authorizer wrapped
(``CallWrapper``: ``Narrowed``, ``ConfigsHidden``, ``Masked``, ``_FetchChecked``,
``_Listing``), which changes the body or the answer and leaves the rest as it was.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol


class Call(Protocol):
    api_key: int
    api_version: int
    body: Any
    listener: str | None
    principal: str | None  # the KafkaPrincipal ("User:alice"); an enveloped call's is the client's
    host: str  # the client's address, "" when unknown
    forwarded: bool  # came inside an Envelope from a broker
    token_authenticated: bool  # the client logged in with a delegation token


    @property
    def done(self) -> bool:
        """Answered, or the connection closed."""

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        """Answer with ``body`` (encoded at the request's version unless told)."""

    def close_connection(self, reason: str) -> None:
        """Answer nothing and close the connection."""


class CallWrapper:
    """A call as it came, with ``respond`` (or ``body``) changed by a subclass."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.api_key, self.api_version, self.body = call.api_key, call.api_version, call.body
        self.listener, self.principal, self.host = call.listener, call.principal, call.host
        self.forwarded, self.token_authenticated = call.forwarded, call.token_authenticated

    @property
    def done(self) -> bool:
        return self.call.done

    @property
    def pipeline(self):  # the connection (an InboundCall's)
        return self.call.pipeline

    @property
    def header(self):  # the request header (an InboundCall's)
        return self.call.header

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        self.call.respond(body, api_version, shared)

    def close_connection(self, reason: str) -> None:
        self.call.close_connection(reason)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.call!r})"


class Narrowed(CallWrapper):
    """The call with only its allowed items (``authorize_items.py``); its answer is
    joined with the refused ones' (``join``)."""

    def __init__(self, call: Call, body, join: Callable) -> None:
        super().__init__(call)
        self.body, self.join = body, join

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        self.call.respond(self.join(body), api_version)
