"""A memory's text as the change rules read it: the speaker of a conversation memory
("Andrew: …"), its sentences and clauses, and the subject each clause is about.

Only a subject the clause names is one: a person's name, "the user", "I" (the speaker, or
the writer when the memory names none), "we" / "the team". A clause about "he", "she", "it"
or "they" has no subject the rules can trust and makes no claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.extraction.changes.fields import field_label
from apps.extraction.verbs import third_person_verb

_I = re.IGNORECASE


def word_set(text: str) -> frozenset[str]:
    """The words of a list written as one string."""
    return frozenset(text.split())


#: "Name: text" — the speaker of a conversation memory (one to three capitalised words).
_SPEAKER = re.compile(
    r"^(?P<name>[A-Z][\w'’-]{1,40}(?: [A-Z][\w'’-]{1,40}){0,2}):\s+(?P<body>\S.*)$", re.DOTALL
)
#: When a memory was said or a date it resolved: "(said on 8 May 2023)", "(around 28 July 2023)".
_DATE_NOTE = re.compile(r"\s*\((?:said on|around|on)\s[^()]*\)", _I)
#: Discourse openers that precede the subject: "Guess what - ", "On another note, ", "Oh, ".
_OPENER = re.compile(
    r"^(?:(?:guess what|on another note|by the way|btw|also|oh|ah|well|so|yeah|yes|yep|hey|hi|"
    r"hello|wow|anyway|actually|update|fun fact|big news|good news|news|and|but|plus|"
    r"fyi|heads up|quick update|just so you know|for the record|note|noted|remember|"
    r"since we last (?:talked|spoke|chatted)|since last time|lately|recently|these days|"
    r"this (?:week|month|year)|last (?:week|month|year)|today|yesterday)\b[\s,:;!.-]*)+",
    _I,
)
#: A time phrase before the subject: "In September 2023 Melanie got hurt", "On Friday, 15
#: December 2023, John…", "Last season, John…".
_TIME_OPENER = re.compile(
    r"^(?:(?:in|on|during|around|by|since|early|late|mid)\s+(?:[\w,]+\s+){0,3}?\d{4},?\s+"
    r"|(?:last|this|earlier this|that)\s+(?:season|week|weekend|month|year|summer|spring|fall|"
    r"autumn|winter|morning|night|time),?\s+)+",
    _I,
)
#: Words that open a sentence capitalised but are not a name.
_NOT_NAMES = word_set(
    "the this that these those it its there here what when where why how who which my our "
    "your his her their we they he she you i a an and but or so if then also just well oh "
    "yes no not some any many much more most every each all both another other such only "
    "guess meet much since last next today yesterday tomorrow recently lately after "
    "before during while because once now still maybe perhaps probably sure thanks thank "
    "hey hi hello wow great good nice cool ok okay crazy big new old dear please let lots "
    "man especially honestly luckily thankfully unfortunately sadly happily interestingly "
    "surprisingly speaking anyway besides plus meanwhile overall otherwise though "
    "although monday tuesday wednesday thursday friday saturday sunday january february "
    "march april june july august september october november december congrats "
    "congratulations dude bro girl guys folks everyone someone nobody life work home "
    "family"
)
#: Capitalised words shaped like adjectives, adverbs or gerunds ("Impressive", "Networking").
_NOT_NAME_SHAPE = re.compile(r"(?:ing|ly|ive|ful|ous|ed|able|ible|less)$", _I)


def is_name(name: str) -> bool:
    """Whether a capitalised word or two is a name, not an adjective or a greeting."""
    return not any(
        part.lower() in _NOT_NAMES or _NOT_NAME_SHAPE.search(part) for part in name.split()
    )


_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
#: Parts of a body an injury or a recovery is told of.
BODY_PARTS = (
    r"ankle|knee|arm|leg|wrist|back|shoulder|foot|feet|hand|hip|neck|elbow|toe|finger|"
    r"hamstring|achilles|ribs?|head|spine"
)
#: "My wrist is fine now", "my cat allergy went away": the writer's, as "the user's wrist …"
#: is the user's.
_MY_HEALTH = re.compile(
    rf"^(?i:my)\s+(?=(?:left\s+|right\s+)?(?i:{BODY_PARTS})\b|(?:[\w-]+\s+){{1,2}}(?i:allergy)\b)"
)
#: The things a project's memories speak of as subjects ("the project uses Jest", "the cluster
#: runs Kubernetes 1.27"), each an entity of its own; a repo and a codebase are the project.
THINGS = {
    "project": "project",
    "site": "website",
    "repo": "project",
    "repository": "project",
    "codebase": "project",
    "app": "app",
    "application": "app",
    "service": "service",
    "website": "website",
    "api": "api",
    "backend": "backend",
    "frontend": "frontend",
    "cluster": "cluster",
    "database": "database",
    "ci": "ci",
    "pipeline": "pipeline",
    "server": "server",
}
THING_NAMES = "|".join(THINGS)
# "The project uses …", not "the project's database …" (the database is the subject there).
_THING = re.compile(
    rf"^(?:the|this|our)\s+(?P<kind>(?:[a-z][\w-]*\s+){{0,2}}?)(?P<thing>{THING_NAMES})\b(?![’'])",
    re.I,
)
_TEAM = re.compile(r"^(?:we|the team|our team)\b", _I)
_WE = re.compile(r"^we\b", _I)
_USER = re.compile(r"^(?:the user|user)\b", _I)
_NAME = re.compile(r"^(?P<name>[A-Z][a-z][\w-]*(?: [A-Z][a-z][\w-]*)?)(?![\w'’])")
#: Someone of a person's family, or a pet, as the subject of a clause under its owner's name:
#: "the user's daughter", "my grandmother", "Olga's dog Rex" (a named one is its name).
_KIN_WORDS = word_set(
    "mother father parents brother sister son daughter child children wife husband partner "
    "fiance fiancee boyfriend girlfriend grandmother grandfather grandparents aunt uncle cousin "
    "niece nephew dog cat parrot bird rabbit hamster horse turtle"
)
#: Other words for one of them: "my mom" and "my mother" are one person.
_KIN_ALIASES = {
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "kids": "children",
    "puppy": "dog",
    "kitten": "cat",
}
_KIN_SUBJECT = re.compile(
    r"^(?:(?P<user>(?i:the user))(?:'s|’s)|(?P<my>(?i:my))|(?P<name>[A-Z][a-z]+)(?:'s|’s))\s+"
    r"(?:(?i:little|older|younger|big|baby|eldest|oldest|youngest|new)\s+)?"
    rf"(?P<kin>(?i:{'|'.join(sorted([*_KIN_WORDS, *_KIN_ALIASES], key=len, reverse=True))}))"
    # "the user's cat allergy", "my dog food": a thing of the kind, not the one of the family.
    r"(?!\s+(?i:allergy|allergies|food|litter|hair|sitter|walker|toys?|bed|bowl)\b)"
    r"(?:,?\s+(?P<called>[A-Z][a-z]+)(?![\w'’]),?)?\s+(?P<predicate>\S.*)$"
)
#: "Kiwi, the user's parrot, died": who the name is, between commas, before the predicate.
_APPOSITIVE = re.compile(
    r"^,\s*(?:(?i:the user)(?:'s|’s)|(?i:my|our|his|her|their)|[A-Z][a-z]+(?:'s|’s))\s+"
    r"(?:[\w-]+\s+){0,2}?[\w-]+,\s*(?P<predicate>\S.*)$"
)
_CLAUSE = re.compile(
    r"\s+[-–—]\s+|;\s+|:\s+|,\s+(?=(?:but|so)\s)"
    # "… cut out meat completely, the user is vegetarian now": a comma before a new subject.
    r"|,\s+(?=(?:the user|I|I'm|I’m|I've|we)\s+(?!and\b|or\b|&)|(?:my|the user['’]s)\s+\w+\s+"
    r"(?:\w+\s+)?(?:is|are|was|were)\s)"
    # "I'm a nurse and I live in Boston": a second clause with a subject of its own.
    r"|,?\s+(?:and|but)\s+(?=(?:I|I'm|I’m|I've|we|the user)\s|the user['’]s\s)"
)
#: "Marco and I have separated": a name alone before the "and" is one of two subjects.
_TWO_SUBJECTS = re.compile(r"^[A-Z][a-z]+ (?:and|&) (?=(?:I|the user)\s)")
#: A second predicate of the same subject: "Maria left the hospital and now works at Globex".
#: Only before a verb the rules read, so "works as a nurse and midwife at …" stays whole.
_SAME_SUBJECT = re.compile(
    r",?\s+(?:and|but)\s+(?=(?:(?:now|then|also|currently|recently|later|since then)\s+)?"
    r"(?:works?|is working|lives?|is living|moved|relocated|joined|started|began|got|quit|left|"
    r"lost|retired|eats?|stopped|switched|uses?|became|married|adopted|has|have|is|am|"
    r"sold|cancell?ed|closed|traded|drives|cycles|bikes|walks|commutes|rides|takes)\b)",
    _I,
)
#: Reported speech and hearsay: the clause is someone else's claim, not the subject's.
_REPORTED = re.compile(
    r"\b(?:said|says|told|tells|thinks|thought|heard|hears|mentioned|wonders|"
    # "asked to switch replies to English" is the subject's own request, not a report.
    r"(?:asked|asks)(?!\s+(?:me\s+|us\s+|the assistant\s+)?(?:to|for)\b))\b"
    r"(?:\s+\w+)?\s+(?:that\s+)?",
    _I,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
#: Abbreviations whose full stop ends no sentence ("Dr. Lee", "J.K. Rowling", "e.g. this").
_ABBREVIATION = re.compile(
    r"\b(?:(?i:e\.g|i\.e|etc|vs|dr|mr|mrs|ms|st|jr|sr|approx)|[A-Z](?:\.[A-Z])*)\."
)


_SHIELDED_STOP = "\x01"


def shield_abbreviations(text: str) -> str:
    """``text`` with the full stops of abbreviations ("St. Luke's", "Dr. Lee") hidden, so a
    rule that ends a sentence or a value at a full stop passes over them (see :func:`unshield`)."""
    return _ABBREVIATION.sub(lambda match: match.group(0).replace(".", _SHIELDED_STOP), text)


def unshield(text: str) -> str:
    """The full stops :func:`shield_abbreviations` hid, back."""
    return text.replace(_SHIELDED_STOP, ".")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after ``.``, ``!`` or ``?`` and at line breaks."""
    parts = _SENTENCE_END.split(shield_abbreviations(text))
    return [unshield(part.strip()) for part in parts if part.strip()]


#: The entity of the memory's writer when it names no speaker ("I work at Stripe").
WRITER = "i"


@dataclass(frozen=True)
class Clause:
    """One clause of a memory: who it is about (lower-cased) and the words after the subject."""

    entity: str
    predicate: str
    #: The clause as written (its subject included), for messages and standalone statements.
    text: str
    #: Index of the sentence the clause belongs to in the memory.
    sentence: int
    #: Said by a "we" for its speaker (or the writer): only a household change is theirs too
    #: ("we bought a house", not "we use Jira").
    household_only: bool = False


def speaker_and_body(text: str) -> tuple[str | None, str]:
    """The speaker of a conversation memory ("Andrew: …") and the rest; dates noted in
    parentheses are dropped."""
    text = _DATE_NOTE.sub("", text).strip()
    match = _SPEAKER.match(text)
    if match is None or match.group("name").split()[0].lower() in _NOT_NAMES:
        return None, text
    if field_label(match.group("name")):
        return None, text  # a note, "Location: Berlin": see ``keys._NOTE``
    return match.group("name").lower(), match.group("body")


def memory_sentences(text: str) -> list[str]:
    """The sentences of a memory (speaker and date notes removed)."""
    return sentences(speaker_and_body(text)[1])


#: Words before the verb that stay as they are ("I now live in …", "we still use …").
_LEADING_ADVERBS = word_set(
    "now currently still also just recently finally officially already actually really even "
    "both happily proudly suddenly unexpectedly never always"
)


def _third_person(predicate: str) -> str:
    """A first-person predicate with its verb in the third person, as the rules read every
    subject: "live in Boston" → "lives in Boston", "am vegan" → "is vegan", "now use uv" →
    "now uses uv"; a past form stays as it is ("moved to Paris")."""
    words = predicate.split(" ")
    for index, word in enumerate(words):
        lowered = word.lower().replace("’", "'")
        if lowered in _LEADING_ADVERBS:
            continue
        words[index] = third_person_verb(word)
        break
    return " ".join(words)


def _subject(clause: str, speaker: str | None) -> tuple[str, str] | None:
    """(entity, predicate) when the clause opens with a subject the rules trust."""
    words = clause.split(maxsplit=1)
    if not words:
        return None
    first = words[0].lower().replace("’", "'")
    rest = words[1] if len(words) > 1 else ""
    if (kin := _kin_subject(clause, speaker)) is not None:
        return kin
    if (match := _MY_HEALTH.match(clause)) is not None:
        return speaker or WRITER, "'s " + clause[match.end() :]
    if first in _FIRST_PERSON:
        entity = speaker or WRITER
        contraction = {"i'm": "am ", "i've": "have ", "i'd": "would ", "i'll": "will "}
        return entity, _third_person(contraction.get(first, "") + rest)
    if (match := _USER.match(clause)) is not None:
        return "user", clause[match.end() :].strip()
    if (match := _TEAM.match(clause)) is not None:
        predicate = clause[match.end() :].strip()
        return "team", _third_person(predicate) if first == "we" else predicate
    if (match := _THING.match(clause)) is not None:
        # "The mobile app" and "the web app" are two things: the kind stays in the entity.
        entity = f"{match['kind'].lower()}{THINGS[match['thing'].lower()]}"
        return entity, clause[match.end() :].strip()
    if speaker is not None and re.match(r"^(?:no|not|never)\b", clause, _I):
        # "No, no pets right now." answering a question: the speaker's own statement.
        return speaker, clause
    if (match := _NAME.match(clause)) is not None:
        name = match.group("name")
        if not is_name(name):
            return None
        predicate = clause[match.end() :].strip()
        if (appositive := _APPOSITIVE.match(predicate)) is not None:
            predicate = appositive.group("predicate")
        if predicate.lower().startswith(("and ", "& ", "or ", "'s ", "’s ", ",")):
            return None  # "Audrey and Andrew adopted …", "Andrew's puppy …": not one subject
        return name.lower(), predicate
    return None


def _kin_subject(clause: str, speaker: str | None) -> tuple[str, str] | None:
    """(entity, predicate) of a clause about someone of the family or a pet
    (:data:`_KIN_WORDS`)."""
    match = _KIN_SUBJECT.match(clause)
    if match is None or (match.group("name") and not is_name(match.group("name"))):
        return None
    called = match.group("called")
    if called and is_name(called):
        return called.lower(), match.group("predicate")
    if match.group("user"):
        owner = "user"
    elif match.group("my"):
        owner = speaker or WRITER
    else:
        owner = match.group("name").lower()
    kin = match.group("kin").lower()
    return f"{owner}'s {_KIN_ALIASES.get(kin, kin)}", match.group("predicate")


#: "Ben and Chloe broke up", "The user and Priya got married": a change both of them went
#: through, so the predicate holds for each of the two.
_TOGETHER = (
    r"(?P<predicate>(?:(?:just|finally|officially|recently)\s+)?(?:(?:have|had)\s+)?"
    r"(?:broke up|broken up|split up|separated|"
    r"parted ways|(?:decided to )?(?:go|went) (?:our|their) separate ways|"
    r"(?:called|broke) off (?:the|their) engagement|"
    r"divorced|married|got (?:married|engaged|divorced|back together)|tied the knot|"
    r"started dating|"
    r"(?:are|were) (?:now\s+)?(?:married|engaged|divorced|dating|separated)|"
    r"are (?:getting divorced|divorcing))\b.*)$"
)
_COUPLE = re.compile(
    r"^(?P<first>[A-Z][a-z][\w-]*|(?i:the user)) (?:and|&) "
    r"(?P<second>[A-Z][a-z][\w-]*|I|the user)\s+" + _TOGETHER
)
#: "We're engaged!", "we broke up": the writer and a partner the clause does not name.
_WE_TOGETHER = re.compile(r"^(?i:we)\s+" + _TOGETHER)
#: "Sam and I adopted a cat", "Ana and I moved to Denver": what the writer did with someone,
#: held of each of the two.
_WITH_SOMEONE = re.compile(
    r"^(?P<first>[A-Z][a-z][\w-]*) (?:and|&) (?P<second>I|the user)\s+"
    r"(?P<predicate>(?:(?:just|finally|recently)\s+)?(?:adopted|moved|relocated|bought)\b.*)$"
)


#: "The user and their wife have one child", "Maria and her husband had their second baby":
#: what the couple has, held of the one named (the spouse is no one the rules can name).
_WITH_SPOUSE = re.compile(
    r"^(?P<first>[A-Z][a-z][\w-]*|(?i:the user)) (?:and|&) (?i:his|her|their) "
    r"(?i:wife|husband|partner|spouse)\s+(?P<predicate>(?:(?:just|recently)\s+)?"
    r"(?:have|had|welcomed)\b.*)$"
)


def _couple(clause: str, speaker: str | None) -> list[tuple[str, str]]:
    """Each partner of a couple's shared change, as ``(entity, predicate)``."""
    if (spouses := _WITH_SPOUSE.match(clause)) is not None:
        first = spouses.group("first")
        if first.lower() != "the user" and not is_name(first):
            return []
        predicate = re.sub(r"^((?:just|recently)\s+)?have\b", r"\1has", spouses.group("predicate"))
        return [("user" if first.lower() == "the user" else first.lower(), predicate)]
    expanded = re.sub(r"^(?i:we)['’]re\b", "we are", re.sub(r"^(?i:we)['’]ve\b", "we have", clause))
    if (we := _WE_TOGETHER.match(expanded)) is not None:
        return [(speaker or WRITER, _told_of_one(we.group("predicate")))]
    match = _COUPLE.match(clause) or _WITH_SOMEONE.match(clause)
    if match is None:
        return []
    partners = {"the user": "user", "i": speaker or WRITER}
    names = [match.group(name) for name in ("first", "second")]
    if not all(name.lower() in partners or is_name(name) for name in names):
        return []
    predicate = _told_of_one(match.group("predicate"))
    return [(partners.get(name.lower(), name.lower()), predicate) for name in names]


def _told_of_one(predicate: str) -> str:
    """A couple's predicate as said of one of them: "are engaged" → "is engaged"."""
    predicate = re.sub(
        r"^(are|were)\b", lambda verb: {"are": "is", "were": "was"}[verb[1]], predicate
    )
    # "Marco and I have separated", "… have broken up": told as done.
    predicate = re.sub(r"^(?:have|had)\s+broken up\b", "broke up", predicate)
    return re.sub(r"^(?:have|had)\s+(?=separated|split up|divorced|parted ways)", "", predicate)


def opened_parts(sentence: str) -> list[str]:
    """``sentence``'s clauses, each without the openers and time phrases before its subject
    ("These days the user's favourite band is …", "…; the user's new manager is Aisha")."""
    two = _TWO_SUBJECTS.match(sentence.strip())
    head = two.group(0) if two else ""
    split = _CLAUSE.split(sentence.strip()[len(head) :])
    split[0] = head + split[0]
    parts = (_OPENER.sub("", part.strip()).strip(" ,.;!") for part in split)
    return [opened for part in parts if (opened := _TIME_OPENER.sub("", part).strip())]


def clauses(text: str) -> list[Clause]:
    """Every clause of ``text`` whose subject the rules trust (see the module docstring)."""
    speaker, body = speaker_and_body(text)
    found: list[Clause] = []
    for number, sentence in enumerate(sentences(body)):
        if sentence.rstrip().endswith("?"):
            continue
        for part in opened_parts(sentence):
            if _REPORTED.search(part):
                continue
            subject = _subject(part, speaker)
            # "The user and Priya got married": both, not the user alone.
            subjects = _couple(part, speaker) or ([subject] if subject is not None else [])
            for entity, predicate in subjects:
                for index, piece in enumerate(_SAME_SUBJECT.split(predicate)):
                    # The second verb of "I left the hospital and now work at Globex" is in the
                    # first person too.
                    text, piece = (part, piece) if index == 0 else (piece, _third_person(piece))
                    found.append(Clause(entity=entity, predicate=piece, text=text, sentence=number))
                    if entity == "team" and _WE.match(part):
                        found.append(
                            Clause(speaker or WRITER, piece, text, number, household_only=True)
                        )
    return found
