"""What kind of tool a name is: "PostgreSQL" and "CockroachDB" are databases, "Vim" and "VS
Code" editors. A move to another tool of the same kind replaces the one in use ("we migrated
the billing service to CockroachDB" after "the billing service uses PostgreSQL"); two tools of
different kinds hold side by side ("uses PostgreSQL", "runs on Kubernetes").

Only kinds a person or a project uses one of at a time are listed: two databases behind one
service are rarer than a move from one to another, two editors at once rarer than a switch.
Names that are also everyday words ("Edge", "Render", "Spring") are left out: a value is
matched whole, but "switched to spring" should not read as a framework.
"""

from __future__ import annotations

_KINDS = {
    "database": "postgresql|postgres|mysql|mariadb|sqlite|mongodb|cockroachdb|dynamodb|"
    "cassandra|couchdb|firestore|supabase|planetscale|oracle|sql server",
    "hosting": "aws|amazon web services|gcp|google cloud|google cloud platform|azure|heroku|"
    "fly.io|vercel|netlify|digitalocean|linode|hetzner|ovh",
    "editor": "vim|neovim|emacs|vs code|vscode|visual studio code|sublime text|sublime|"
    "intellij|pycharm|webstorm|goland|zed|nano|notepad++|xcode|android studio",
    "frontend framework": "react|vue|angular|svelte|sveltekit|ember|preact|next.js|nuxt|astro",
    "backend framework": "django|flask|fastapi|rails|ruby on rails|"
    "spring boot|laravel|nestjs|sinatra",
    "orchestration": "kubernetes|k8s|nomad|docker swarm|ecs",
    "ci": "jenkins|github actions|circleci|gitlab ci|travis|travis ci|buildkite|teamcity",
    "team chat": "slack|microsoft teams|discord|mattermost|zulip|rocket.chat",
    "issue tracker": "jira|linear|asana|trello|clickup|youtrack",
    "music streaming": "spotify|apple music|tidal|youtube music|deezer",
    "password manager": "lastpass|1password|bitwarden|dashlane|keepass|keepassxc",
    "browser": "chrome|google chrome|firefox|safari|microsoft edge|brave|vivaldi",
    "email": "gmail|outlook|proton mail|protonmail|fastmail|yahoo mail|icloud mail",
    "error tracking": "sentry|rollbar|bugsnag|honeybadger",
    # One per language: a project may install with npm and with pip.
    "javascript package manager": "npm|yarn|pnpm",
    "python package manager": "pip|poetry|uv|pipenv|conda",
    "javascript test runner": "jest|vitest|mocha|jasmine",
    "python test runner": "pytest|unittest|nose2",
}
#: A tool's name, lower-cased, to its kind.
TOOL_KINDS = {name: kind for kind, names in _KINDS.items() for name in names.split("|")}
#: Every name of each kind, as words to search for ("switched to Firefox" finds "Chrome").
KIND_NAMES = {kind: names.replace("|", " ") for kind, names in _KINDS.items()}


def tool_kind(value: str) -> str | None:
    """The kind of the tool ``value`` names ("PostgreSQL 15": database), or ``None``."""
    name = value.strip().lower().removeprefix("the ")
    if name in TOOL_KINDS:
        return TOOL_KINDS[name]
    # A version after the name: "PostgreSQL 15", "Python 3.12", "Vue 3".
    head, _, version = name.rpartition(" ")
    if head and version.removeprefix("v")[:1].isdigit():
        return TOOL_KINDS.get(head)
    return None
