"""The base of every model magnet reads from a user: ``Strict``, and ``Public`` for the
models people also build from Python."""

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from magnet.errors import MagnetError, validation_message


class Strict(BaseModel):
    """A pydantic model that refuses unknown fields (a typo is an error, never a silent
    default), refuses NaN and infinity for every number, and is frozen once validated.

    ``renamed``: fields a model has renamed (old name -> new); data under an old name is
    refused with a message naming the new one, where ``extra="forbid"`` would only say the
    old one is not allowed."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    renamed: ClassVar[Mapping[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _refuse_old_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for old, new in cls.renamed.items():
                if old in data:
                    raise ValueError(f"the field {old!r} is {new!r} since magnet 0.3: rename it")
        return data


class Public(Strict):
    """A ``Strict`` model of the public API, built from Python (``magnet.Budget(seconds=5)``,
    ``magnet.Layer(K=64)``): a bad field is a ``MagnetError`` naming the model, the field and
    what is allowed (``Budget: seconds: Input should be greater than 0 (got -1)``), as bad
    YAML is, not a pydantic ``ValidationError``.

    Only the direct call goes through here: data read from a file (``model_validate``) and
    a model nested in another are validated by pydantic as before, so their messages keep
    naming the file and the field's path."""

    def __init__(self, /, *args: Any, **data: Any) -> None:
        name = type(self).__name__
        if args:
            fields = ", ".join(type(self).model_fields)
            raise MagnetError(f"give the fields by name ({fields}), got {args!r}", source=name)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            message = validation_message(exc, type(self)).removeprefix("(top): ")
            raise MagnetError(message, source=name) from None

    # pydantic calls a model's own __init__ for nested data too, unless it is marked as its
    # base one: nested data keeps pydantic's messages (the field's path in the file)
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
