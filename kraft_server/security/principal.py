"""Who a connection is: Kafka's ``KafkaPrincipal`` as its string ``User:<name>``.

- PLAINTEXT, and TLS without a client certificate: ``User:ANONYMOUS``.
- Mutual TLS: the certificate's subject as Java's ``X500Principal.getName()``
  prints it (RFC 2253: most specific RDN first, ``,`` between RDNs, ``+`` inside a
  multi-valued one; CN, C, L, ST, O, OU, STREET, DC and UID by keyword, any other
  attribute as ``<oid>=#<DER hex>``), then mapped by ``ssl.principal.mapping.rules``
  (Kafka's ``SslPrincipalMapper``).
- SASL: ``User:<authorization id>`` (the PLAIN or SCRAM user name).

``ssl.principal.mapping.rules`` is a comma-separated list of ``DEFAULT`` (the DN
unchanged) and ``RULE:<regex>/<replacement>/[LU]`` (the first rule whose regex
matches the whole DN wins; ``$1`` in the replacement names a group; L or U
lower- or upper-cases the result). A DN no rule matches fails the connection.
"""
from __future__ import annotations

import re


ANONYMOUS = "User:ANONYMOUS"


def user(name: str) -> str:
    return f"User:{name}"


class NoMatchingRule(Exception):
    """No ``ssl.principal.mapping.rules`` rule applies to the DN (Kafka's NoMatchingRule)."""


# Java's X500Principal RFC2253 keywords (the same set cryptography names).
_KEYWORD_OIDS = {"2.5.4.3", "2.5.4.6", "2.5.4.7", "2.5.4.8", "2.5.4.10", "2.5.4.11", "2.5.4.9",
                 "0.9.2342.19200300.100.1.25", "0.9.2342.19200300.100.1.1"}


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def _attribute(attr) -> str:  # a cryptography.x509.NameAttribute
    if attr.oid.dotted_string in _KEYWORD_OIDS:
        return attr.rfc4514_string()
    value = attr.value if isinstance(attr.value, bytes) else attr.value.encode("utf-8")
    tag = attr._type.value  # the ASN.1 string type the certificate used
    return f"{attr.oid.dotted_string}=#{(bytes([tag]) + _der_length(len(value)) + value).hex()}"


def distinguished_name(der_certificate: bytes) -> str:
    """The subject of a DER certificate in Java's RFC 2253 form."""
    from cryptography import x509  # only with TLS: a PLAINTEXT node never loads it (~80 ms)
    subject = x509.load_der_x509_certificate(der_certificate).subject
    return ",".join("+".join(_attribute(a) for a in rdn) for rdn in reversed(subject.rdns))


_RULE = re.compile(r"\s*((DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?))\s*(,\s*|$)")


def _java_replacement(text: str) -> str:
    """A ``Matcher.replaceAll`` replacement in ``re.sub``'s syntax: ``$n`` names a
    group, a backslash makes the next character literal."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1].replace("\\", "\\\\"))
            i += 2
        elif c == "$" and i + 1 < len(text) and text[i + 1].isdigit():
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            out.append(f"\\g<{text[i + 1:j]}>")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Rule:
    def __init__(self, pattern: str | None = None, replacement: str = "", case: str = ""):
        self.pattern = re.compile(pattern) if pattern is not None else None
        self.replacement = _java_replacement(replacement)
        self.case = case
        self.text = "DEFAULT" if pattern is None else f"RULE:{pattern}/{replacement}/{case}"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if not self.pattern.fullmatch(dn):
            return None
        name = self.pattern.sub(self.replacement, dn)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


class PrincipalMapper:
    """``ssl.principal.mapping.rules`` parsed once; ``name(dn)`` maps a DN."""

    def __init__(self, rules: str = "DEFAULT"):
        self.rules: list[_Rule] = []
        text = (rules or "DEFAULT").strip()
        for m in _RULE.finditer(text):
            if m.start() == m.end() and m.start() == len(text):
                break
            if m.group(2):
                self.rules.append(_Rule())
            elif m.group(3) is not None:
                self.rules.append(_Rule(m.group(3), m.group(5), m.group(7)))
            elif m.group(8):
                raise ValueError(f"Invalid rule: {m.group(8)}")
            if m.end() == len(text):
                break

    def name(self, dn: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(dn)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {dn}, rules [{', '.join(r.text for r in self.rules)}]")
