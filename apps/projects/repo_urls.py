"""Repository URL normalisation, shared by the write path and by ``resolve_project``.

This is neither a read nor a write, so it lives beside ``services`` and ``selectors`` rather
than inside one of them: both need it, and a selector importing a service would invert the
layering.

One repository reaches us in many spellings. They all normalise to ``host/path``, lowercase,
with no scheme, user, port, ``.git`` suffix or surrounding slashes::

    git@github.com:Owner/Repo.git      -> github.com/owner/repo
    ssh://git@github.com:22/owner/repo -> github.com/owner/repo
    https://github.com/owner/repo/     -> github.com/owner/repo
    https://github.com/owner/repo.git  -> github.com/owner/repo
    github.com/owner/repo              -> github.com/owner/repo
    owner/repo                         -> owner/repo   (bare: no host)

Decisions worth knowing:

* Everything is lowercased. GitHub, GitLab and Bitbucket treat owner and repository names
  case-insensitively, and an agent reading ``git remote -v`` should not miss its project
  because of a capital letter. Storing the lowercase form keeps matching a plain equality.
* The port is dropped: ``ssh://host:22/x/y`` and ``https://host/x/y`` are the same repository.
* A leading ``www.`` is dropped for the same reason.
* A bare value is read as ``host/path`` when its first segment looks like a host (contains a
  dot, or is ``localhost``), and as a host-less ``owner/repo`` path otherwise. GitHub and
  GitLab user names cannot contain dots, so this only misreads a dotted GitLab group; pass a
  full URL to be unambiguous.
* As in git itself, ``host:path`` with no slash before the colon is the scp-like SSH form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from apps.projects.exceptions import InvalidRepoUrl

_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.IGNORECASE)
# git's rule: "[user@]host:path" is the scp-like form when no slash comes before the colon.
_SCP_LIKE = re.compile(r"^(?:[^@/:\s]+@)?(?P<host>[^@/:\s]+):(?P<path>.*)$")
_GIT_SUFFIX = ".git"
_WWW_PREFIX = "www."
MIN_PATH_SEGMENTS = 2  # owner/repo; GitLab subgroups may add more.


@dataclass(frozen=True)
class RepoRef:
    """A normalised repository reference. ``host`` is blank for a bare ``owner/repo``."""

    host: str
    path: str

    @property
    def canonical(self) -> str:
        return f"{self.host}/{self.path}" if self.host else self.path


def _looks_like_host(segment: str) -> bool:
    return "." in segment or segment == "localhost"


def _clean_host(host: str) -> str:
    # A user ("git@") is who connects, not which repository; drop it wherever it appears.
    host = host.rpartition("@")[2].lower()
    return host.removeprefix(_WWW_PREFIX)


def _clean_path(path: str, *, raw: str) -> str:
    # Query strings and fragments never name a different repository.
    path = path.split("?", 1)[0].split("#", 1)[0]
    segments = [segment for segment in path.split("/") if segment]
    if segments and segments[-1].lower().endswith(_GIT_SUFFIX):
        segments[-1] = segments[-1][: -len(_GIT_SUFFIX)]
    if (
        len(segments) < MIN_PATH_SEGMENTS
        or any(segment in {"", ".", ".."} for segment in segments)
        or any(character.isspace() for segment in segments for character in segment)
    ):
        raise InvalidRepoUrl(
            "repo_url must name a repository, e.g. 'github.com/owner/repo' or 'owner/repo'.",
            details={"repo_url": raw},
        )
    return "/".join(segments).lower()


def normalize_repo_url(raw: str) -> RepoRef:
    """Parse any accepted spelling of a repository into its normalised :class:`RepoRef`.

    Raises ``InvalidRepoUrl`` (422 ``invalid_repo_url``) when no ``owner/repo`` path can be
    read from ``raw``.
    """
    value = raw.strip()
    if _SCHEME.match(value):
        parts = urlsplit(value)
        if not parts.hostname:
            raise InvalidRepoUrl("repo_url has a scheme but no host.", details={"repo_url": raw})
        return RepoRef(host=_clean_host(parts.hostname), path=_clean_path(parts.path, raw=raw))
    scp_like = _SCP_LIKE.match(value)
    if scp_like:
        return RepoRef(
            host=_clean_host(scp_like["host"]), path=_clean_path(scp_like["path"], raw=raw)
        )
    first, _, rest = value.lstrip("/").partition("/")
    if rest and _looks_like_host(first):
        return RepoRef(host=_clean_host(first), path=_clean_path(rest, raw=raw))
    return RepoRef(host="", path=_clean_path(value, raw=raw))
