"""The keys that hold one value at a time ("the user's email", "the deadline"), and the labels
of a note written as ``Key: value`` ("Location: Berlin", "Email: sam@example.com"), which are
fields, not the speakers of a conversation ("Ana: …")."""

from __future__ import annotations

import re

#: Keys whose value is one thing at a time: a new value replaces the old one.
SINGLE_VALUED_KEYS = (
    r"(?:favou?rite [a-z ]+|birthday|age|e-?mail(?: address)?|phone(?: number)?|address|"
    r"home address|time ?zone|manager|boss|job title|title|salary|budget|deadline|"
    r"default branch|port|version|editor|ide|shell|operating system|os|main language|"
    r"primary language|database|stack|department|rent|car|commute|school|major|gym|doctor|"
    r"therapist|hometown|home town|partner|girlfriend|boyfriend|wife|husband|name|nickname|"
    r"username|handle|pronouns|employer|company|city|country|location|relationship status|"
    r"landlord|dentist|(?:hourly |daily |monthly )?rate|price|fee|dose|dosage|preferred name|"
    r"test runner|linter|formatter|bundler|package manager|build tool|ci provider|host|"
    r"hosting provider|(?:base )?url|endpoint|domain|hostname|region|license|licence|owner|"
    r"internet provider|"
    # "the upload size limit", "the API rate limit", "the session timeout", "the max file
    # size", "the default region", "the deploy target".
    r"(?:[a-z-]+ ){0,2}(?:limit|quota|timeout|threshold|rotation|schedule|cadence|frequency|"
    r"target)|"
    r"(?:max|maximum|min|minimum|default)(?: [a-z-]+){1,2})"
)
#: Keys that are also people who speak in a transcript ("Therapist: How are you feeling?",
#: "Host: Welcome back"): a label of one of these without an owner is a speaker.
_SPEAKING_ROLES = re.compile(
    r"^(?:manager|boss|doctor|therapist|dentist|landlord|host|partner|girlfriend|boyfriend|"
    r"wife|husband)$"
)
_FIELD = re.compile(rf"^(?:(?:current|new|preferred|primary|home|work)\s+)?{SINGLE_VALUED_KEYS}$")


def field_label(label: str) -> bool:
    """Whether a ``Label:`` before a value names a key that holds one value ("Location",
    "Favorite color", "Time zone") rather than someone speaking."""
    label = " ".join(label.lower().split())
    return bool(_FIELD.match(label)) and not _SPEAKING_ROLES.match(label)
