"""BROKER_LOGGER on a controller (Kafka's ``RuntimeLoggerManager``, handled locally by
``ControllerApis``, never written to the log): this process's log levels, read and
changed at run time. Python's levels stand for log4j's (CRITICAL as FATAL, WARNING as
WARN, 5 as TRACE); ``root`` is the root logger.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode

from .validation import ResourceError

ROOT = "root"
LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
          "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "OFF": logging.CRITICAL + 10}
NAMES = {v: k for k, v in LEVELS.items()}
SET, DELETE = 0, 1
OPS = {0: "SET", 1: "DELETE", 2: "APPEND", 3: "SUBTRACT"}


def _level(logger: logging.Logger) -> str:
    return NAMES.get(logger.getEffectiveLevel(), logging.getLevelName(logger.getEffectiveLevel()))


def logger_levels() -> dict[str, str]:
    """``Log4jController.loggers``: the root logger and every named one."""
    out = {ROOT: _level(logging.getLogger())}
    for name, logger in sorted(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            out[name] = _level(logger)
    return out


def apply(node_id: int, name: str, changes: list, validate_only: bool) -> None:
    """``changes``: ``[(logger, operation, level)]``. Raises ResourceError."""
    try:
        wanted = int(name)
    except ValueError:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}") from None
    if wanted != node_id:
        raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unexpected node id. Expected {node_id}, but received {name}")
    known = logger_levels()
    for logger, op, level in changes:
        if op == SET:
            if logger not in known:
                raise ResourceError(ErrorCode.INVALID_CONFIG, f"Logger {logger} does not exist!")
            if level not in LEVELS:
                raise ResourceError(ErrorCode.INVALID_CONFIG,
                                    f"Cannot set the log level of {logger} to {level} as it is not a supported "
                                    f"log level. Valid log levels are {', '.join(LEVELS)}")
        elif op == DELETE:
            if logger == ROOT:
                raise ResourceError(ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")
        elif op in OPS:
            raise ResourceError(ErrorCode.INVALID_REQUEST,
                                f"{OPS[op]} operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise ResourceError(ErrorCode.INVALID_REQUEST,
                                f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")
    if validate_only:
        return
    for logger, op, level in changes:
        target = logging.getLogger() if logger == ROOT else logging.getLogger(logger)
        target.setLevel(LEVELS[level] if op == SET else logging.NOTSET)
