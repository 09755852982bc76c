"""The base of every model magnet reads from a user: ``Strict``."""

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A pydantic model that refuses unknown fields (a typo is an error, never a silent
    default), refuses NaN and infinity for every number, and is frozen once validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
