"""A ``sasl.jaas.config`` value, as Kafka's ``JaasConfig`` reads it::

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_alice="alice-secret";

One login module (class name, control flag, ``key=value`` options with optional
double quotes, a closing ``;``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))')


class JaasError(ValueError):
    pass


@dataclass
class LoginModule:
    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


def _tokens(text: str):
    pos = 0
    while pos < len(text):
        if not text[pos:].strip():
            return
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JaasError(f"Unexpected character at position {pos} of the JAAS config")
        pos = m.end()
        if m.group(1) is not None:
            yield "word", re.sub(r"\\(.)", r"\1", m.group(1))
        elif m.group(2) is not None:
            yield "word", m.group(2)
        else:
            yield "sym", m.group(3) or m.group(4)


def parse_jaas(text: str) -> LoginModule:
    tokens = list(_tokens(text))
    modules, i = [], 0
    while i < len(tokens):
        if i + 1 >= len(tokens) or tokens[i][0] != "word" or tokens[i + 1][0] != "word":
            raise JaasError("Login module class and control flag expected in the JAAS config")
        name, flag = tokens[i][1], tokens[i + 1][1].lower()
        if flag not in FLAGS:
            raise JaasError(f"Invalid control flag '{tokens[i + 1][1]}' in the JAAS config")
        module, i = LoginModule(name, flag), i + 2
        while i < len(tokens) and tokens[i] != ("sym", ";"):
            if i + 2 >= len(tokens) or tokens[i + 1] != ("sym", "=") or tokens[i + 2][0] != "word":
                raise JaasError("Option 'key=value' expected in the JAAS config")
            module.options[tokens[i][1]] = tokens[i + 2][1]
            i += 3
        if i >= len(tokens):
            raise JaasError("JAAS config entry not terminated by semi-colon")
        modules.append(module)
        i += 1
    if len(modules) != 1:
        raise JaasError(f"JAAS config property contains {len(modules)} login modules, should be 1 module")
    return modules[0]
