"""Who may change the team's context folder on a shared server: ``c.AnalystApp.context_editors``.

The folder is the server's, read by every user's turns; what is added to it (a verified
answer) changes what the model is told and what the team's suite holds. So adding is kept
to the people named: users by name, JupyterHub groups as ``group:NAME``. Unset, the server's
own user only: the token holder of a single-user server (``local``), or the Hub user the
server was started for (``$JUPYTERHUB_USER``). Everyone else reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

#: The prefix of an entry naming a JupyterHub group.
GROUP = "group:"
#: The owner of a single-user server, as the API names its token holder.
LOCAL_USER = "local"


class ContextEditors(BaseModel, frozen=True):
    """The users and Hub groups who may add to the context folder."""

    users: frozenset[str]
    groups: frozenset[str] = frozenset()

    @classmethod
    def configured(cls, entries: Sequence[str] | None) -> ContextEditors:
        """From ``c.AnalystApp.context_editors`` (``None``: the server's own user).

        >>> sorted(ContextEditors.configured(["ann", "group:analysts"]).users)
        ['ann']
        >>> ContextEditors.configured(["group:analysts"]).allows("bob", ["analysts"])
        True
        """
        if entries is None:
            owner = os.environ.get("JUPYTERHUB_USER")
            return cls(users=frozenset({LOCAL_USER, *([owner] if owner else [])}))
        users = {e.strip() for e in entries if e.strip() and not e.startswith(GROUP)}
        groups = {e[len(GROUP):].strip() for e in entries if e.startswith(GROUP) and e[len(GROUP):].strip()}
        return cls(users=frozenset(users), groups=frozenset(groups))

    def allows(self, user: str, groups: Iterable[str] = ()) -> bool:
        """Whether ``user`` (a member of ``groups``) may add to the folder."""
        return user in self.users or not self.groups.isdisjoint(groups)


def hub_groups(user: Any) -> list[str]:
    """The JupyterHub groups of a request's user (its Hub model's ``groups``; none elsewhere)."""
    model = getattr(user, "hub_user", None)
    groups = model.get("groups") if isinstance(model, dict) else None
    return [str(g) for g in groups] if isinstance(groups, list) else []
