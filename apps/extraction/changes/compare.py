# length: one comparison per pair of attribute families, read through the three tables at the
# end; split, a rule would sit apart from the table that says when it applies.
"""Whether two claims are about the same thing, and whether they state different values."""

from __future__ import annotations

from collections.abc import Callable

from apps.extraction.changes.claims import Claim
from apps.extraction.changes.keys import UNOWNED, same_key
from apps.extraction.changes.kinds import tool_kind
from apps.extraction.changes.patterns import (
    ACTIVE,
    ALIVE,
    CHOICE,
    FRAME,
    HELD,
    PHRASE,
    STOPPED,
    SWITCHED,
    words,
)
from apps.extraction.changes.text import WRITER

#: Diets that exclude each other; the rest (gluten-free, keto, …) may hold beside another.
_EXCLUSIVE_DIETS = frozenset(
    {"vegetarian", "vegan", "pescatarian", "omnivore", "carnivore", "flexitarian"}
)
#: How much of the smaller topic two topical claims must share to be about the same thing.
TOPIC_OVERLAP = 0.75


def _same_value(left: str, right: str) -> bool:
    """Equal, or one names the other with more detail ("google" / "google in london")."""
    if left == right:
        return True
    left_words, right_words = words(left), words(right)
    if not left_words or not right_words:
        return False
    return left_words <= right_words or right_words <= left_words


def _overlap(left: frozenset[str], right: frozenset[str]) -> bool:
    """Most of the smaller set of words shared."""
    shared = left & right
    return bool(shared) and len(shared) / min(len(left), len(right)) >= TOPIC_OVERLAP


def _held_words(claim: Claim) -> frozenset[str] | None:
    """What a claim says its entity has or holds, as words: a key's value ("the user's phone is
    an iPhone 12"), a tool in use ("uses Spotify for music"), a held value, a position or
    something taken part in."""
    if claim.family in ("key", "tool"):
        return words(claim.value)
    if claim.family == HELD or (claim.family == "activity" and claim.value == ACTIVE):
        return claim.topic
    return None


def _another_things_switch(switch: Claim, key: Claim) -> bool:
    """Whether ``switch`` is a tool switch of a named thing ("tool:blog") and ``key`` a key of
    something else ("key:deploy target")."""
    if switch.family != "tool" or key.family != "key":
        return False
    thing = switch.attribute.split(":", 1)[1]
    return thing not in ("*", "platform") and not _related_keys(key.attribute[4:], thing)


def _ends_holding(old: Claim, new: Claim) -> bool | None:
    """Whether one claim ends what the other holds under a key: "sold the iPhone" against "the
    user's phone is an iPhone 12", "closed the Chase account" against "the user's bank is
    Chase", "moved from LastPass to 1Password" against "the user's password manager is
    LastPass" (either order; the later memory wins). ``None`` when neither is such a pair; an
    activity against an activity is compared by topic in :func:`conflict`."""
    for stop, other in ((new, old), (old, new)):
        ended = _ended_words(stop)
        # An activity stopped against one going on is told by their topics (:func:`conflict`);
        # a switch from a value ("switched from Spanish to Japanese lessons") ends one too.
        if not ended or other.family == stop.family:
            continue
        if other.family == "activity" and not stop.replaced:
            continue
        if other.family == FRAME:
            # What a verb said ends only when a switch names all of it: "switched from oat
            # milk to almond milk" against "drinks oat milk", not "speaks Spanish at home".
            if stop.replaced and ended == other.topic:
                return True
            continue
        held = _held_words(other)
        if held and other.family == "tool":
            # A tool ends only as a whole: "stopped using Spotify for podcasts" leaves "uses
            # Spotify for music" standing.
            kind = words(other.attribute.split(":", 1)[1])
            return True if ended <= held | kind else None
        if held and stop.replaced:
            # A value named as replaced ends a holding only whole: "replaced Sentry with
            # Datadog" ends "runs on Sentry", "replaced the Sentry dashboard" does not; and a
            # thing's own switch ("moved the blog from Heroku to Netlify") ends only a key of
            # that thing, not "the deploy target is Heroku".
            if _another_things_switch(stop, other):
                return None
            return True if ended <= held else None
        if held:
            return True if _overlap(ended, held) else None
    return None


def _switched(old: Claim, new: Claim) -> bool | None:
    """Whether a switch to another value of a kind ("switched to day shifts") changes what the
    other claim said of that kind ("works night shifts"): the same kind, and none of the
    switch's distinguishing words in the other ("switched to the night team" after "is on the
    night nursing team" restates it). Two switches of a kind compare their values. ``None``
    when neither is a switch, or the kinds differ."""
    for switch, other in ((new, old), (old, new)):
        if switch.family != SWITCHED or other.family not in (SWITCHED, PHRASE):
            continue
        if switch.attribute.split(":", 1)[1] != other.attribute.split(":", 1)[1]:
            return None
        if other.family == SWITCHED:
            return switch.topic != other.topic
        return not (switch.topic & other.topic)
    return None


def _switched_key(old: Claim, new: Claim) -> bool | None:
    """A switch to another version or value of a kind against a key holding one of that kind
    ("upgraded to a Pixel 8" against "the user's phone is a Pixel 6"): another one changes it."""
    switch, keyed = (old, new) if old.family == SWITCHED else (new, old)
    # Whole tokens of a key's value: a version ("6") is shorter than a content word.
    held = set(keyed.value.split()) if keyed.family == "key" else keyed.topic
    if switch.attribute.split(":", 1)[1] not in held:
        return None
    return not (switch.topic & held)


def _held_then_keyed(old: Claim, new: Claim) -> bool | None:
    """A key read as holding one value of several ("our sprint length is two weeks") against
    the same key said to be one value now ("… is now one week"): the change says the key holds
    one value, so another one replaces it."""
    held, keyed = (old, new) if old.family == HELD else (new, old)
    # "switched internet providers to Verizon" keys the plural of "the internet provider".
    if not same_key(held.attribute.split(":", 1)[1], keyed.attribute.split(":", 1)[1]):
        return None
    value = words(keyed.value)
    return not (held.topic <= value or value <= held.topic)


def _ended_words(claim: Claim) -> frozenset[str]:
    """What a claim says its entity no longer has, as words: an activity stopped, or the value
    a change names as replaced ("moved from LastPass to 1Password": lastpass)."""
    if claim.family == "activity" and claim.value == STOPPED:
        return claim.topic
    return words(claim.replaced) if claim.replaced else frozenset()


#: Keys that name a role: "Emma's title is senior designer".
_ROLE_KEYS = frozenset({"key:title", "key:job title", "key:position", "key:role"})
#: Words that make a held thing a position ("is the head of marketing").
_POSITIONS = words(
    "lead leader manager head director chief vp president captain chair owner coordinator "
    "ceo cto cfo coo cio cmo"
)
#: A position in a group someone belongs to beside work ("the captain of the soccer team").
_GROUPS = words("team band club board committee choir league crew troupe orchestra")


def _titled(old: Claim, new: Claim) -> bool | None:
    """A role ("was promoted to design director") against a title key ("Emma's title is senior
    designer"): another value changes it."""
    keyed, role = (old, new) if old.family == "key" else (new, old)
    if keyed.attribute not in _ROLE_KEYS or role.value in ("none", "employed"):
        return None
    return not _same_value(keyed.value, role.value)


def _position_left(old: Claim, new: Claim) -> bool | None:
    """A new role in the same field as a position held ("promoted to VP of marketing" against
    "is the head of marketing"), or a job ended ("left the company" against "is the CTO"):
    the position is left. A position in a team, a band or a club is not a job's."""
    held, role = (old, new) if old.family == "activity" else (new, old)
    if held.value != ACTIVE or not held.topic & _POSITIONS or held.topic & _GROUPS:
        return None
    if role.value == "none":
        return True
    if role.value == "employed":
        return None
    field = held.topic - _POSITIONS
    role_words = words(role.value)
    if not field or not field & role_words:
        return None
    return not held.topic <= role_words


def _same_topic(old: Claim, new: Claim) -> bool:
    """Most of the smaller topic's words shared, or (an application) the same head noun: "an
    interview for a design internship", "accepted for a fashion internship"."""
    if not old.topic or not new.topic:
        return False
    if old.head and old.head == new.head:
        return True
    return _overlap(old.topic, new.topic)


#: How much of the smaller topic an activity told "now" must share with an older one to be
#: the same activity done another way: the verb and one more word ("coach", "team").
NOW_TOPIC_OVERLAP = 0.5


def _now_same_activity(left: frozenset[str], right: frozenset[str]) -> bool:
    """Two words or more and half the smaller topic shared: "coaches the junior football
    team" and "now coaches the senior team", not "plays football" and "now plays tennis"."""
    shared = left & right
    return len(shared) >= 2 and len(shared) / min(len(left), len(right)) >= NOW_TOPIC_OVERLAP


def _pets(old: Claim, new: Claim) -> bool | None:
    old_species, new_species = old.attribute[5:], new.attribute[5:]
    if old_species != new_species:
        # "no pets" against a count of any species: related only through the zero.
        if "pet" not in (old_species, new_species):
            return None
        if "0" not in (old.value, new.value):
            return None
    values = {old.value, new.value}
    if "0" in values:
        return len(values) > 1
    if new.value == "+":
        return old.value.isdigit()  # one more than a count; "has a dog" stays true
    if old.value.isdigit() and new.value.isdigit():
        return old.value != new.value
    return False  # "some" against a count or "+": nothing says it changed


def _choice(old: Claim, new: Claim) -> bool | None:
    """Two choices of one setting ("prefers light mode in the editor" / "dark mode in the
    editor"), or of one kind of thing when neither names a setting ("aisle seats" / "window
    seats"): another choice changes it; anything else is not the same choice."""
    for chosen, other in ((new, old), (old, new)):
        # "now prefers coffee over tea" against "prefers tea".
        if chosen.replaced and _same_value(chosen.replaced, other.value):
            return not _same_value(chosen.value, other.value)
    if old.topic or new.topic:
        if not _overlap(old.topic, new.topic):
            return None
    elif old.head != new.head:
        return None
    return not _same_value(old.value, new.value)


def _moved_between_kind(old: Claim, new: Claim) -> bool:
    """Two tools of one kind (:mod:`~.kinds`: two databases, two editors), one of them told as
    a move or switch: the move replaces the other. Two tools merely in use hold side by side."""
    if not (old.now or new.now or old.replaced or new.replaced):
        return False
    kind = tool_kind(old.value)
    return kind is not None and kind == tool_kind(new.value)


def _tool_for_frame(old: Claim, new: Claim) -> bool | None:
    """A tool moved to ("switched to Firefox") against what a verb said the subject does with
    another tool of its kind ("browses with Chrome"): the move ends it."""
    framed, tool = (old, new) if old.family == FRAME else (new, old)
    kind = tool_kind(tool.value)
    if not tool.now or kind is None:
        return None
    named = [word for word in framed.topic if tool_kind(word) == kind]
    if not named:
        return None
    return not any(_same_value(word, tool.value) for word in named)


def _diet(old: Claim, new: Claim) -> bool:
    if old.value == new.value:
        return False
    negated = {
        value.removeprefix("not ") for value in (old.value, new.value) if value.startswith("not ")
    }
    if negated:
        return bool(negated & {old.value, new.value})
    return old.value in _EXCLUSIVE_DIETS and new.value in _EXCLUSIVE_DIETS


def _employment(old: Claim, new: Claim) -> bool | None:
    if new.replaced:
        # "quit Acme": a change only for the memory that named Acme as the employer.
        if old.value in ("none", "employed"):
            return None
        return True if _same_value(old.value, new.replaced) else None
    if "none" in (old.value, new.value):
        return old.value != new.value
    if "employed" in (old.value, new.value):
        return False  # a job without a name agrees with any named one
    return not _same_value(old.value, new.value)


#: Whose key one said without an owner can be: the memory's writer, the user or their team.
_OWNERS_OF_UNOWNED = frozenset({"user", "team", WRITER})


def _same_entity(left: str, right: str) -> bool:
    """The same entity (a team and its project are one), or a key said without an owner ("the
    standup is at 9:30") and the writer's, the user's or the team's ("we moved the standup to
    10")."""
    if left == right or {left, right} == {"team", "project"}:
        return True  # "we switched the test runner" and "the project's test runner"
    return UNOWNED in (left, right) and bool({left, right} & _OWNERS_OF_UNOWNED)


#: Keys that say where someone lives, which a move changes.
_HOME_KEYS = frozenset({"address", "home address", "city", "location"})


def _address_moved(old: Claim, new: Claim) -> bool | None:
    """ "moved to 48 Pine Avenue, Seattle" against "the user's address is 12 Oak Street"."""
    keyed = old if old.family == "key" else new
    if keyed.attribute.removeprefix("key:").removeprefix("current ") not in _HOME_KEYS:
        return None
    return not _same_value(old.value, new.value)


def _never(_old: Claim, _new: Claim) -> None:
    """Several values may hold at once: only an end or a switch changes one."""
    return None


def _health(old: Claim, new: Claim) -> bool | None:
    parts = {old.attribute, new.attribute}
    if len(parts) > 1 and "health:*" not in parts:
        return None
    return old.value != new.value


def _topical(old: Claim, new: Claim) -> bool | None:
    """An activity, a result, a decision, a preference or a condition: the same topic, another
    value; or, told "now", the same activity done another way."""
    if old.value == new.value == ACTIVE and (old.now or new.now):
        # "now teaches guitar at the community center" against "teaches piano there", "now
        # coaches the senior team" against "coaches the junior football team".
        if not (_same_topic(old, new) or _now_same_activity(old.topic, new.topic)):
            return None
        if not (old.topic <= new.topic or new.topic <= old.topic):
            return True
        # The same routine, on other days now: "now goes to the gym on Tuesdays and Fridays"
        # against "… on Mondays and Thursdays".
        return bool(old.days and new.days and old.days != new.days)
    if not _same_topic(old, new):
        return None
    return old.value != new.value


def _tools(old: Claim, new: Claim) -> bool | None:
    if new.replaced and _same_value(new.replaced, old.value):
        return not _same_value(old.value, new.value)
    if _moved_between_kind(old, new):
        # "migrated the billing service to CockroachDB" after "… uses PostgreSQL".
        return not _same_value(old.value, new.value)
    if old.attribute != new.attribute or old.attribute == "tool:*":
        return None
    if None not in (kinds := {tool_kind(old.value), tool_kind(new.value)}) and len(kinds) > 1:
        return None  # "runs on Kubernetes", "runs on CockroachDB": both hold
    return not _same_value(old.value, new.value)


def _related_keys(left: str, right: str) -> bool:
    """Keys that share a word, or one's word begins the other's ("deploy target",
    "deployments"; "staging environment", "staging")."""
    return any(
        a.startswith(b) or b.startswith(a)
        for a in words(left)
        for b in words(right)
        if min(len(a), len(b)) >= 4
    )


def _keys(old: Claim, new: Claim) -> bool | None:
    if not same_key(old.attribute[4:], new.attribute[4:]):
        # "moved deployments from Heroku to Fly.io" against "the deploy target is Heroku": a
        # related key whose value the switch names as the one it left.
        if new.replaced and _same_value(new.replaced, old.value):
            return True if _related_keys(old.attribute[4:], new.attribute[4:]) else None
        return None
    # Whole tokens: an address or a number differs in what content words would drop
    # ("carol@old.example.com" / "carol@new.example.com").
    left, right = set(old.value.split()), set(new.value.split())
    return not (left <= right or right <= left)


def _framed(old: Claim, new: Claim) -> bool | None:
    """ "now flies with Delta" against "flies with United"; "now also" adds (no claim)."""
    if not (old.now or new.now):
        return None
    return not (old.topic <= new.topic or new.topic <= old.topic)


def _household(old: Claim, new: Claim) -> bool | None:
    if old.replaced or new.replaced:
        # "moved out of her parents' place" against "lives with her parents".
        leaving, staying = (new, old) if new.replaced else (old, new)
        return True if _same_value(leaving.replaced, staying.value) else None
    return not _same_value(old.value, new.value)


def _school(old: Claim, new: Claim) -> bool | None:
    if "graduated" in (old.value, new.value):
        # "graduated from MIT" ends "is a student at MIT", not a school named otherwise.
        done, other = (old, new) if old.value == "graduated" else (new, old)
        return True if _same_value(done.replaced, other.value) else None
    return not _same_value(old.value, new.value)


#: Keys that name someone's partner, which a relationship status may end or begin.
_PARTNER_KEYS = frozenset(
    {
        "partner",
        "girlfriend",
        "boyfriend",
        "wife",
        "husband",
        "spouse",
        "fiance",
        "fiancé",
        "fiancée",
    }
)
#: Statuses without a partner.
_UNPARTNERED = frozenset({"single", "divorced", "widowed"})


def _partner_status(old: Claim, new: Claim) -> bool | None:
    """ "broke up" or "got divorced" against "the user's partner is Alex"; "the user's
    girlfriend is Mia" against "the user is single". Any other status says nothing of who."""
    keyed, status = (old, new) if old.family == "key" else (new, old)
    if keyed.attribute[4:] not in _PARTNER_KEYS or status.value not in _UNPARTNERED:
        return None
    return True


_Rule = Callable[[Claim, Claim], bool | None]
#: How two claims of different families compare, by the pair of families.
_ACROSS: dict[frozenset[str], _Rule] = {
    frozenset({FRAME, "tool"}): _tool_for_frame,
    frozenset({SWITCHED, "key"}): _switched_key,
    frozenset({SWITCHED, HELD}): _switched_key,
    frozenset({"key", "residence"}): _address_moved,
    frozenset({"key", HELD}): _held_then_keyed,
    frozenset({"key", "role"}): _titled,
    frozenset({"activity", "role"}): _position_left,
    frozenset({"key", "relationship"}): _partner_status,
}
#: How two claims of one family compare, whatever their qualifiers.
_WITHIN: dict[str, _Rule] = {
    HELD: _never,
    PHRASE: _never,
    "pets": _pets,
    "health": _health,
    **dict.fromkeys(("activity", "result", "decision", "preference", "condition"), _topical),
    "tool": _tools,
    "key": _keys,
}
#: How two claims of one family and one attribute compare; any other family by its value.
_SAME_ATTRIBUTE: dict[str, _Rule] = {
    FRAME: _framed,
    "diet": _diet,
    CHOICE: _choice,
    "household": _household,
    "employer": _employment,
    "role": _employment,
    "school": _school,
}


def conflict(old: Claim, new: Claim) -> bool | None:
    """``None`` when the two claims are not about the same attribute of the same entity;
    otherwise whether they state different values (``True``: a change or a contradiction)."""
    if not _same_entity(old.entity, new.entity):
        return None
    if ALIVE in (old.family, new.family):
        # A death ends whatever held of the one who died, or that they lived.
        return old.value != new.value if old.family == new.family else True
    if (ended := _ends_holding(old, new)) is not None:
        return ended
    families = frozenset({old.family, new.family})
    if (rule := _ACROSS.get(families)) is not None:
        return rule(old, new)
    if SWITCHED in families:
        return _switched(old, new)
    if len(families) > 1:
        return None
    if (rule := _WITHIN.get(old.family)) is not None:
        return rule(old, new)
    if old.attribute != new.attribute:
        return None
    if (rule := _SAME_ATTRIBUTE.get(old.family)) is not None:
        return rule(old, new)
    return not _same_value(old.value, new.value)
