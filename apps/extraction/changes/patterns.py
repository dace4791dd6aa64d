# length: one rule per attribute, each a few regexes and the values it reads; split, the rules
# that share the value helpers and word lists would be scattered.
"""The attribute rules: what a clause's predicate says about its subject.

Each rule reads the words after the subject ("works as a nurse at St Mary's", "has two
turtles", "no longer plays tennis") and returns ``(attribute, value, topic)`` findings:

* ``employer`` / ``role`` — where and as what someone works; ``none`` when a job ended;
* ``residence`` — the place someone lives (a capitalised place: a city, a country);
* ``household`` — who someone lives with, or ``alone``;
* ``home`` — whether the home someone lives in is ``rented`` or ``owned``;
* ``diet`` — vegetarian, vegan, …, ``omnivore``, or ``not <diet>``;
* ``relationship`` — married, engaged, dating, single, divorced;
* ``pets:<species>`` — ``0``, ``some``, ``+`` (one more than before) or a count;
* ``health:<part>`` — injured, recovering, recovered (``*``: the part is not named);
* ``condition`` — a lasting condition (an allergy, a diagnosis), its words as the topic;
* ``activity`` — ``active`` or ``stopped``, with the activity's words as its topic; a habit
  told with how often it recurs ("goes to the gym twice a week") is ``active`` too, and so is
  something run, driven or held ("runs the bakery", "is the team lead"); an end of one
  ("sold the bakery", "stepped down as team lead") is ``stopped``;
* ``switched:<kind>`` — a switch to another value of a kind ("switched to day shifts"), with
  what sets it apart as its topic; :func:`phrases` reads what an older clause said of kinds;
* ``preference`` — ``likes`` or ``dislikes``, with what is liked as the topic;
* ``result`` — passed or failed a test, or where an application stands (applied,
  interviewed, accepted, rejected), with its words as the topic;
* ``tool:<topic>`` — what is used for something, and ``from`` what it replaced; a switch to a
  tool of a known kind (:mod:`.kinds`: "switched to VS Code") is ``tool:*``, told ``now``;
* ``decision`` — ``yes`` / ``no`` to a course of action (its words as the topic);
* ``alive`` — ``dead`` when someone or a pet died (``alive`` for a named one a memory holds);
* ``workplace`` — where someone works from: ``remote``, ``office`` or ``hybrid``;
* ``school`` — the school someone attends (``graduated`` from a named one);
* ``commute`` — how someone gets to work or school (``car``, ``bike``, ``train``, …).

A clause that hedges, plans or wishes ("may have found a job", "plans to move") states no
current value, so no rule reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.extraction.changes.kinds import tool_kind
from apps.extraction.changes.text import BODY_PARTS, shield_abbreviations, unshield, word_set
from apps.extraction.numbers import CARDINALS, NONE, number_value

_I = re.IGNORECASE

#: An activity's two values: taken part in, or ended.
ACTIVE, STOPPED = "active", "stopped"
#: A value held under a key that may hold several at once ("the user's bank is Chase"): only
#: a statement that ends it changes it.
HELD, HOLDS = "held", "holds"
#: A switch to another value of a kind ("switched to day shifts"), and what an older clause
#: said of that kind ("works night shifts").
SWITCHED, PHRASE = "switched", "phrase"
#: Whether a person or a pet lives: a death ends whatever held of them.
ALIVE, DEAD = "alive", "dead"
#: Where someone works from: ``remote``, ``office`` or ``hybrid``.
WORKPLACE = "workplace"
#: What a verb says someone does, told "now" against what it said before ("now flies with
#: Delta" against "flies with United"): ``frame:<verb>``.
FRAME = "frame"


#: A finding: the attribute, its value and, for topical attributes, the topic's words.
@dataclass(frozen=True)
class Finding:
    attribute: str
    value: str
    topic: frozenset[str] = field(default_factory=frozenset)
    #: The value the finding says it replaced ("switched from X to Y": X), when it names one.
    replaced: str = ""
    #: The head noun of a topical finding ("a design internship": "internship").
    head: str = ""
    #: Told as what holds now ("now teaches guitar"), against what held before.
    now: bool = False
    #: The weekdays a routine is kept on ("goes to the gym on Mondays and Thursdays").
    days: frozenset[str] = field(default_factory=frozenset)


_ADVERBS = (
    r"(?:(?:now|currently|still|also|just|recently|finally|officially|already|actually|"
    r"really|even|both|happily|proudly|suddenly|unexpectedly)\s+)*"
)
#: A clause with any of these states no current value: a plan, a wish, a guess, a habit of
#: the past, something someone else did, a condition.
_UNSETTLED = re.compile(
    # "may" the verb, not the month ("in May", "7 May 2023").
    r"\b(?:(?<!\d )(?<!in )(?<!on )(?<!of )(?<!early )(?<!late )may(?! \d)|"
    # "plans to move", not "a fiber plan" or "a meal plan".
    r"might|maybe|perhaps|probably|possibly|hopefully|hope|hopes|hoping|plans?\s+(?:to|on)|"
    # "sprint planning", "release planning": the meeting, not a plan.
    # "the launch is planned for March 3" states the schedule that holds; "had planned",
    # "was planned" a plan that may not.
    r"(?<!sprint )(?<!release )(?<!quarterly )planning|(?<!\bis )(?<!\bare )planned|"
    # "wants summaries in bullet points": how something is wanted, not a wish.
    r"wants?(?!\s+(?!to\b)[\w-]+\s+(?:in|as)\s)|wanted|wanting|would|could|should|will|won't|"
    # "going to" the future, not the errand of a habit ("stopped going to the gym").
    r"(?<!stopped )(?<!quit )(?<!started )(?<!keeps )(?<!kept )going to|"
    r"gonna|thinking (?:of|about)|considering|considers|consider|wish|wishes|if|unless|"
    r"someday|one day|dream|dreams|dreaming|trying to|tries to|try to|looking (?:for|into|to)|"
    r"about to|used to|next (?:week|month|year|summer|spring|fall|winter)|soon|excited to|"
    r"can't wait|cannot wait|would love|imagine|pretend|almost|nearly|growing up|"
    r"as a (?:kid|child|boy|girl|teen|teenager)|when (?:\w+ )?was (?:young|little|a kid|a child|"
    r"a boy|a girl|younger|small)|in (?:his|her|their|my) (?:childhood|youth|teens)|back then|"
    r"at the time|in the past)\b",
    _I,
)
_NUMBERS = {**NONE, **CARDINALS}
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
_DOG_BREEDS = (
    "retriever labrador poodle beagle terrier bulldog husky corgi dachshund chihuahua spaniel "
    "collie pug greyhound rottweiler schnauzer doodle shepherd"
)
_SPECIES = {
    "dog": "dog",
    "dogs": "dog",
    "puppy": "dog",
    "puppies": "dog",
    "pup": "dog",
    "pups": "dog",
    "doggie": "dog",
    "doggies": "dog",
    "doggy": "dog",
    "cat": "cat",
    "cats": "cat",
    "kitten": "cat",
    "kittens": "cat",
    "kitty": "cat",
    "turtle": "turtle",
    "turtles": "turtle",
    "tortoise": "turtle",
    "tortoises": "turtle",
    "fish": "fish",
    "bird": "bird",
    "birds": "bird",
    "parrot": "bird",
    "rabbit": "rabbit",
    "rabbits": "rabbit",
    "bunny": "rabbit",
    "hamster": "hamster",
    "hamsters": "hamster",
    "horse": "horse",
    "horses": "horse",
    "pet": "pet",
    "pets": "pet",
    # A dog told by its breed: "a golden retriever named Biscuit".
    **{f"{breed}{plural}": "dog" for breed in _DOG_BREEDS.split() for plural in ("", "s")},
}
_SPECIES_WORDS = "|".join(sorted(_SPECIES, key=len, reverse=True))
_COUNT_WORDS = "|".join([*_NUMBERS, r"\d{1,2}"])
_DIETS = (
    r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|carnivore|plant-based|"
    r"gluten-free|dairy-free|flexitarian|omnivore"
)
_POSSESSIVE = r"(?:his|her|their|my|our|the|\w+'s|\w+’s)"
#: Where a value ends: punctuation, a conjunction or a time phrase.
_VALUE_END = re.compile(
    # A dot ends a value only before a space or the end: "carol@acme.com", "Python 3.12".
    # Nor a thousands comma: "$2,100".
    r"\s*(?:,(?!\d{3}\b)|[;!?()\[\]\"]|\.(?!\S)|\s[-–—]\s|\b(?:and|but|because|since|so|which|who|whom|where|"
    r"when|while|after|before|with|until|though|although|now|again|recently|lately|"
    r"last|this|next|ago|for (?:a|an|the|about|over|almost|nearly|\d|one|two|three|"
    r"four|five|six|several|many|some)|as (?:a|an|of|well)|to (?:help|be|get|make|keep|"
    r"support|learn)|in (?:order|\d{4}|january|february|march|april|may|june|july|august|"
    r"september|october|november|december)|on (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|as (?:it|he|she|they|i|we)|that|there|here|too|yet|either|"
    r"the (?:week|weekend|day|month|year) (?:before|of|after)|around|since|during)\b|"
    r"\s\d).*$",
    _I | re.DOTALL,
)
_LEADING = re.compile(r"^(?:(?:a|an|the|his|her|their|my|our|its|\w+'s|\w+’s|some)\s+)+", _I)
#: A thing named after its model year, "a 2012 Subaru Outback": the year is no end of it.
_MODEL_YEAR = re.compile(r"^((?:a|the|his|her|their|my|our)\s+)(?:19|20)\d{2}\s+(?=[A-Z])", _I)


def value_text(raw: str) -> str:
    """A value as read: cut where it ends, leading articles and possessives dropped."""
    raw = _MODEL_YEAR.sub(r"\1", raw.strip())
    value = unshield(_VALUE_END.sub("", shield_abbreviations(raw)))
    return _LEADING.sub("", value).strip(" '\"’")


def words(text: str) -> frozenset[str]:
    """Content words of a topic or value, lower-cased and lightly stemmed."""
    return frozenset(content_words(text))


def content_words(text: str) -> list[str]:
    """:func:`words` in the order the text says them."""
    stop = _TOPIC_STOP
    found = []
    for word in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        word = word.removesuffix("'s").removesuffix("’s")
        if word in stop or len(word) < 2:
            continue
        found.append(_stem(word))
    return found


def _stem(word: str) -> str:
    """A word without its inflection: "coffees" and "coffee", "glasses" and "glass", "focus"
    as it is."""
    for suffix in ("ing", "ies", "es", "ed", "s"):
        stem = word[: -len(suffix)]
        if not word.endswith(suffix) or len(stem) < 3:
            continue
        if suffix == "es" and not stem.endswith(("s", "x", "z", "ch", "sh")):
            continue  # "coffees", "homes": only the "s" goes
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            return word
        if suffix in ("ing", "ed") and stem[-1] == stem[-2] and stem[-1] not in "lsz":
            return stem[:-1]  # "swimming", "stopped": "swim", "stop"
        return stem + ("y" if suffix == "ies" else "")
    return word


_TOPIC_STOP = word_set(
    "a an the his her their my our its your of to in on at for with from by and or but "
    "some any new first own this that these those it them him me us up out about into "
    "over again more class classes lesson lessons course courses session sessions program "
    "really just also still now very so"
)


# --- employment -------------------------------------------------------------------------------
_JOB_STARTED = re.compile(
    rf"^{_ADVERBS}(?:started|began|got|landed|took|accepted|found|secured|has|scored|"
    r"has started|has landed|got hired (?:for|into))\s+(?:a |an |his |her |their |my )?"
    r"(?:new |first |full-time |part-time |permanent |dream )*(?:job|position|role|gig|"
    r"internship)\b(?P<rest>.*)$"
    r"|^(?:got |was |has been )?(?:accepted|hired)\s+(?:for|into|as)\s+(?:a |an |the )?"
    r"(?:[\w-]+\s+){0,3}?(?:job|position|role|internship)\b(?P<rest2>.*)$"
    # "got hired as a junior developer at Fernhill Labs", "was hired by Stripe".
    rf"|^{_ADVERBS}(?:got |was |has been |have been )?{_ADVERBS}hired\s+"
    r"(?P<rest3>(?:as|at|by)\s.*)$",
    _I,
)
_WORKS = re.compile(
    rf"^{_ADVERBS}(?:works|is working|has been working|started working|began working|"
    r"is employed|has worked)\s+"
    # "works part-time at the library", "works remotely for Acme".
    r"(?:(?:part-time|full-time|part time|full time|remotely|freelance|nights)\s+)?"
    r"(?P<rest>(?:as|at|for)\s.*)$",
    _I,
)
_JOINED = re.compile(
    rf"^{_ADVERBS}joined\s+(?P<org>[A-Z][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*)*)(?P<rest>.*)$"
)
_PROMOTED = re.compile(
    rf"^{_ADVERBS}(?:got |was |has been |has just been )?promoted(?: at work)?\s+to\s+"
    r"(?:the (?:position|role|rank) of\s+)?(?P<role>.+)$"
    # "became head of product at Stripe", "was named VP of sales": a title, not "a teacher".
    rf"|^{_ADVERBS}(?:became|has become|was made|was named|was appointed)\s+(?:the\s+)?"
    # An employer named after it: "became head of the PTA" is no job.
    r"(?P<title>(?:head|vp|vice president|director|chief|lead)\b[\w -]*?)"
    r"(?=\s+(?:at|for)\s+(?-i:[A-Z]))",
    _I,
)
_JOB_ENDED = re.compile(
    rf"^{_ADVERBS}(?:lost|quit|left|resigned from|gave up|was let go from|got fired from|"
    rf"was fired from|was laid off from|got laid off from)\s+{_POSSESSIVE}\s+(?:\w+\s+)?"
    r"(?:job|position|role)\b(?P<rest>.*)$",
    _I,
)
#: "left the company", "quit the startup": a job ended without the employer's name.
_LEFT_THE_COMPANY = re.compile(
    rf"^{_ADVERBS}(?:left|quit|resigned from|was let go from|was laid off from)\s+"
    r"(?:the|his|her|their|my|our)\s+(?:company|firm|startup|agency)\b(?!['’])",
    _I,
)
_NO_JOB = re.compile(
    rf"^{_ADVERBS}(?:(?:was|got|has been) (?:laid off|fired|let go)\b|"
    # "handed in my notice", "resigned": a job ended by its holder.
    r"(?:handed|put|turned) in (?:my|his|her|their) (?:notice|resignation)\b|"
    r"gave (?:my |his |her |their )?notice\b|"
    r"resigned\b(?!\s+(?:from|as|to|myself|himself|herself)\b)|"
    r"(?:is|has been) (?:now |currently )?(?:unemployed|jobless|out of work|between jobs|"
    r"retired)\b|retired\b)",
    _I,
)
#: "quit Acme", "left Google and joined Meta", "resigned from Initech": a named employer left.
#: Only an organisation's capitalised name; whether it was the employer is for the comparison.
_LEFT_EMPLOYER = re.compile(
    rf"^{_ADVERBS}(?:quit|left|resigned from|was let go from|got fired from|was laid off from)"
    r"\s+(?-i:(?P<org>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3}))(?!['’]s\b)"
    # What may follow: nothing, or a time, a reason or the next step ("left Acme last year",
    # "quit Initech to start a company"), never more of a place ("left Acme early today").
    r"(?P<rest>\s*(?:$|[,;.!]|(?:and|to|after|last|in|this|recently|because|since|for a|"
    r"for an|for another|two|three|\d)\b).*)$",
    _I,
)
#: Occupations "is a …" names as a role: a job, not a trait ("is a teacher", "is now a nurse").
OCCUPATIONS = (
    r"teacher|nurse|doctor|physician|surgeon|dentist|pharmacist|therapist|engineer|developer|"
    r"programmer|designer|lawyer|attorney|accountant|manager|principal|professor|lecturer|"
    r"student|chef|cook|pilot|firefighter|police officer|scientist|researcher|analyst|"
    r"consultant|architect|journalist|photographer|electrician|plumber|mechanic|farmer|"
    r"cashier|waiter|waitress|barista|librarian|paramedic|veterinarian|intern|director|"
    r"founder|freelancer|contractor|recruiter|salesperson|paralegal|technician|assistant"
)
#: A role held beside another ("is also a volunteer firefighter") replaces nothing.
_ANOTHER_ROLE = re.compile(r"\b(?:also|too|as well|volunteer|part-time|side)\b", _I)
_IS_OCCUPATION = re.compile(
    rf"^{_ADVERBS}(?:is|became|has become)\s+{_ADVERBS}(?:a|an)\s+"
    rf"(?P<role>(?:[\w-]+\s+){{0,2}}?(?:{OCCUPATIONS}))(?:\s+now)?"
    # "is officially an attorney now, still at Hart & Cole".
    r"(?P<rest>(?:,?\s+(?:still\s+)?(?:at|for|with)\s.*)?)$",
    _I,
)
_AS = re.compile(
    r"\bas (?:a |an |the )?(?P<role>[\w' -]+?)(?=\s+(?:at|for|with|in|from|on)\b|[,.;!?]|$)", _I
)
_AT = re.compile(r"\b(?:at|for|with) (?P<org>[\w&'’. -]+)", _I)
_NOT_EMPLOYERS = re.compile(
    r"^(?:home|work|the moment|the same time|least|most|first|last|a while|a bit|now|"
    r"night|school|church|the shelter|a shelter|the gym|a gym|long time|while|years?|months?|"
    r"weeks?|days?|hours?|ages|fun|free|a living|myself|himself|herself|themselves|"
    r"(?:a |the )?(?:local |nearby )?(?:shelter|charity|cause|community|club|group))\b",
    _I,
)


def _job_details(rest: str) -> list[Finding]:
    found = []
    role = _AS.search(rest)
    if role is not None and (value := value_text(role.group("role"))):
        found.append(Finding("role", value.lower()))
    org = _AT.search(rest)
    value = value_text(org.group("org")) if org is not None else ""
    if value and not _NOT_EMPLOYERS.match(value):
        found.append(Finding("employer", value.lower()))
    return found


def employment(predicate: str) -> list[Finding]:
    if (match := _JOB_ENDED.match(predicate)) is not None:
        return [Finding("employer", "none"), Finding("role", "none")]
    if _NO_JOB.match(predicate) or _LEFT_THE_COMPANY.match(predicate):
        return [Finding("employer", "none"), Finding("role", "none")]
    if (match := _PROMOTED.match(predicate)) is not None:
        value = value_text(match.group("role") or match.group("title")).lower()
        return [Finding("role", value)] if value else []
    if (match := _JOB_STARTED.match(predicate)) is not None:
        hired = re.sub(r"^by\b", "at", match.group("rest3") or "", flags=_I)
        details = _job_details(match.group("rest") or match.group("rest2") or hired)
        if not any(finding.attribute == "employer" for finding in details):
            details.append(Finding("employer", "employed"))
        return details
    if (match := _WORKS.match(predicate)) is not None:
        return _job_details(match.group("rest"))
    occupation = _IS_OCCUPATION.match(predicate.rstrip(" .!"))
    if occupation is not None and not _ANOTHER_ROLE.search(predicate):
        role = value_text(occupation.group("role")).lower()
        details = _job_details(occupation.group("rest"))
        return [Finding("role", role), *(f for f in details if f.attribute == "employer")]
    if (match := _LEFT_EMPLOYER.match(predicate)) is not None:
        org = value_text(match.group("org")).lower()
        if org and not _NOT_EMPLOYERS.match(org):
            return [Finding("employer", "none", replaced=org)]
    if (match := _JOINED.match(predicate)) is not None:
        org = value_text(match.group("org")).lower()
        rest = match.group("rest")
        if org and re.match(r"^\s+as\b", rest, _I):
            return [Finding("employer", org), *_job_details(rest)]
    return []


# --- residence --------------------------------------------------------------------------------
_LIVES = re.compile(
    rf"^{_ADVERBS}(?:lives|is living|has been living|resides|is based|has settled|settled|"
    r"is settled|has moved|moved|relocated|has relocated|moved back|moved out)\s+"
    # "moved from Berlin to Munich": the place left named first.
    r"(?:(?:away\s+)?from\s+(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)*\s+)?"
    r"(?:in|to|into|at|down to|over to|back to|out to)\s+(?P<place>.+)$",
    _I,
)
#: A named place, or a street address ("48 Pine Avenue").
_PLACE = re.compile(
    r"^(?:\d+[A-Za-z]?\s+(?=[A-Z]))?(?:[A-Z][\w'’.-]*)(?:\s+(?:[A-Z][\w'’.-]*|of|de|upon|on))*"
)
#: "a studio apartment in Brooklyn", "her own flat in Leeds": the home, then its place.
_HOME_IN = re.compile(
    r"^(?:a|an|the|my|our|his|her|their)\s+(?:[a-z][\w'’-]*\s+){0,4}?(?:in|at)\s+(?=[A-Z])"
)
#: Capitalised, but a time, not a place ("moved into a flat in May").
_NOT_PLACES = word_set(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter "
    "christmas easter"
)


def residence(predicate: str) -> list[Finding]:
    match = _LIVES.match(predicate)
    if match is None:
        return []
    place = _HOME_IN.sub("", match.group("place").strip(), count=1)
    place = re.sub(r"^(?:the )", "", place)
    named = _PLACE.match(place)
    if named is None:
        return []  # "moved into a new apartment": no place named
    value = re.sub(r"(?:\s+(?:of|de|upon|on))+$", "", named.group(0))
    if value.split()[0].lower() in _NOT_PLACES or tool_kind(value) is not None:
        return []  # a time ("moved into a flat in May"), or a tool ("moved over to Neovim")
    return [Finding("residence", value.lower())]


# --- household ----------------------------------------------------------------------------------
_LIVES_WITH = re.compile(
    rf"^{_ADVERBS}(?:lives|is living|has been living|moved in|"
    # "shares a house with their partner Sam".
    r"shares (?:a|an|the|their|his|her) (?:house|flat|apartment|home|place|room))\s+"
    r"(?:together\s+)?with\s+(?P<who>.+)$",
    _I,
)
_LIVES_ALONE = re.compile(
    rf"^{_ADVERBS}(?:lives|is living|has been living)\s+(?:alone|on (?:his|her|their|my) own|"
    r"by (?:himself|herself|themselves|myself))\b",
    _I,
)


#: "moved out of her parents' place": no longer living with whoever the home was.
_MOVED_OUT = re.compile(
    rf"^{_ADVERBS}moved out of (?:her|his|their|my|our|the)\s+(?P<who>[\w-]+?)(?:'s|’s|'|’)?\s+"
    r"(?:place|home|house|apartment|flat)\b",
    _I,
)


#: "moved into her own apartment": a home of one's own, with no one it was shared with.
_OWN_HOME = re.compile(
    rf"^{_ADVERBS}(?:moved into|got|has|lives in)\s+(?:her|his|their|my|our)\s+own\s+"
    r"(?:place|home|house|apartment|flat)\b",
    _I,
)


def household(predicate: str) -> list[Finding]:
    """Who someone lives with ("lives with two roommates"), or that they live alone; moving
    out of someone's home ends living with them."""
    if (match := _MOVED_OUT.match(predicate)) is not None:
        return [Finding("household", "moved out", replaced=match.group("who").lower())]
    if _OWN_HOME.match(predicate):
        return [Finding("household", "own home")]
    if _LIVES_ALONE.match(predicate):
        return [Finding("household", "alone")]
    if (match := _LIVES_WITH.match(predicate)) is not None:
        who = value_text(match.group("who")).lower()
        return [Finding("household", who)] if words(who) else []
    return []


# --- home tenure ----------------------------------------------------------------------------------
_DWELLING = r"(?:studio|apartment|flat|house|home|condo|townhouse|room|place|bungalow|loft)"
#: A second home is not where someone lives: "bought a beach house", "a vacation home".
_SECOND_HOME = r"(?!(?:vacation|holiday|beach|summer|weekend|second|lake|country)\b)"
_RENTS_HOME = re.compile(
    # Not a landlord's: "rents out the flat", "rents a room to a student".
    rf"^{_ADVERBS}(?:rents|is renting|has been renting|lives in a rented)(?!\s+out\b)\s+"
    rf"(?:(?:a|an|the|his|her|their|my|our)\s+)?{_SECOND_HOME}(?:[\w-]+\s+){{0,2}}?"
    rf"{_DWELLING}\b(?!\s+(?:out|to)\b)(?!.*\bfor\s+(?:his|her|their|my|our)\s)",
    _I,
)
_OWNS_HOME = re.compile(
    rf"^{_ADVERBS}(?:bought|purchased|has bought|owns|closed on)\s+"
    rf"(?:(?:a|an|the|his|her|their|my|our)\s+)?(?:(?:first|own|new)\s+)*{_SECOND_HOME}"
    rf"(?:[\w-]+\s+){{0,1}}?{_DWELLING}\b(?!.*\bfor\s+(?:his|her|their|my|our)\s)"
    rf"|^{_ADVERBS}(?:is|became)\s+(?:a\s+)?(?:first-time\s+)?homeowner\b",
    _I,
)


def home_tenure(predicate: str) -> list[Finding]:
    """Whether someone's home is ``rented`` or ``owned``: "rents an apartment downtown", then
    "bought a house in the suburbs" (not a second home, nor one bought for someone else)."""
    if _RENTS_HOME.match(predicate):
        return [Finding("home", "rented")]
    if _OWNS_HOME.match(predicate):
        return [Finding("home", "owned")]
    return []


# --- diet ---------------------------------------------------------------------------------------
_DIET_IS = re.compile(
    rf"^{_ADVERBS}(?:is|has been|became|has become|went|has gone|turned|is now|is fully)\s+"
    rf"(?:a |an |fully |strictly |completely )?(?P<diet>{_DIETS})\b",
    _I,
)
_DIET_ON = re.compile(
    rf"^{_ADVERBS}(?:follows|is on|started|switched to|is following|eats|has)\s+(?:a |an |the )?"
    rf"(?:strict |mostly )?(?P<diet>{_DIETS})\s+diet\b"
    # "is doing keto right now", "has been on keto since May": a diet named without "diet".
    rf"|^{_ADVERBS}(?:is doing|has been doing|is on|has been on|went|is going)\s+"
    rf"(?:strict\s+)?(?P<diet2>keto|paleo|carnivore)\b",
    _I,
)
_DIET_NOT = re.compile(
    rf"^{_ADVERBS}(?:is )?(?:no longer|not|isn't|stopped being|quit being|quit|stopped|gave up|"
    rf"dropped|went off|came off)\s+(?:a |an |the )?(?P<diet>{_DIETS})\b",
    _I,
)
_MEAT = re.compile(
    rf"^{_ADVERBS}(?:(?:has|have|had)\s+{_ADVERBS})?(?P<verb>eats|started eating|is eating|"
    r"went back to eating|stopped eating|quit eating|gave up|given up|cut out|doesn't eat|"
    r"does not eat|no longer eats)\s+(?:red )?meat\b",
    _I,
)


#: A vegetarian who eats fish again is no longer one; an omnivore's fish says nothing new.
_FISH = re.compile(
    rf"^{_ADVERBS}(?:started eating|is eating|went back to eating|eats)\s+(?:fish|seafood)\b", _I
)


#: "started eating eggs again": a vegan no longer.
_ANIMAL_FOODS = re.compile(
    rf"^{_ADVERBS}(?:started eating|is eating|went back to eating|eats)\s+"
    r"(?:eggs|dairy|cheese|honey|milk)\b(?:.*\bagain\b)",
    _I,
)


def _diet_value(raw: str) -> str:
    value = raw.lower().replace("pescetarian", "pescatarian")
    return "vegan" if value == "plant-based" else value


_MEAT_GIVEN_UP = (
    "stopped",
    "quit",
    "gave up",
    "given up",
    "cut out",
    "doesn't",
    "does not",
    "no longer",
)


def diet(predicate: str) -> list[Finding]:
    if (match := _DIET_NOT.match(predicate)) is not None:
        return [Finding("diet", "not " + _diet_value(match.group("diet")))]
    for pattern in (_DIET_IS, _DIET_ON):
        if (match := pattern.match(predicate)) is not None:
            return [Finding("diet", _diet_value(match.group("diet") or match.group("diet2")))]
    if (match := _MEAT.match(predicate)) is not None:
        verb = match.group("verb").lower()
        ended = verb.startswith(_MEAT_GIVEN_UP)
        return [Finding("diet", "vegetarian" if ended else "omnivore")]
    if _FISH.match(predicate):
        return [Finding("diet", "not vegetarian")]
    if _ANIMAL_FOODS.match(predicate):
        return [Finding("diet", "not vegan")]
    return []


# --- relationship -----------------------------------------------------------------------------
_RELATIONSHIP = [
    (
        re.compile(
            rf"^{_ADVERBS}(?:is|has been|got|just got|became)\s+(?P<status>married|engaged|"
            r"divorced|single|separated|widowed)\b",
            _I,
        ),
        None,
    ),
    (re.compile(rf"^{_ADVERBS}(?:married|wed|tied the knot|ties the knot)\b", _I), "married"),
    (
        re.compile(
            rf"^{_ADVERBS}(?:had|celebrated)\s+(?:a |an |their |his |her |the )?(?:\w+\s+){{0,3}}?"
            r"wedding(?: ceremony)?\b",
            _I,
        ),
        "married",
    ),
    (re.compile(rf"^{_ADVERBS}(?:got engaged|proposed to|is engaged)\b", _I), "engaged"),
    (
        re.compile(
            rf"^{_ADVERBS}(?:broke up|split up|separated|parted ways|"
            r"(?:decided to |have decided to |chose to )?(?:go|went) (?:our|their) separate ways|"
            r"(?:called|broke) off (?:the|their|his|her) engagement)\b",
            _I,
        ),
        "single",
    ),
    (
        re.compile(rf"^{_ADVERBS}(?:got divorced|divorced|is getting divorced|is divorcing)\b", _I),
        "divorced",
    ),
    (
        re.compile(
            rf"^{_ADVERBS}(?:is dating|started dating|has been dating|has|got)\s+(?:a )?(?:new )?"
            r"(?:girlfriend|boyfriend|partner)\b"
            rf"|^{_ADVERBS}(?:is dating|started dating|has been dating|is seeing|"
            r"has been seeing)\s+"
            r"(?:someone|somebody)\b"
            rf"|^{_ADVERBS}(?:is dating|started dating|has been dating|is in a relationship with|"
            r"is seeing|has been seeing|started seeing)"
            r"\s+(?-i:[A-Z][a-z]+)\b",
            _I,
        ),
        "dating",
    ),
]


def relationship(predicate: str) -> list[Finding]:
    for pattern, status in _RELATIONSHIP:
        if (match := pattern.match(predicate)) is not None:
            value = status or match.group("status").lower()
            return [Finding("relationship", "single" if value == "separated" else value)]
    return []


# --- pets -----------------------------------------------------------------------------------------
_NO_PETS = re.compile(
    r"^(?:(?:does|do)(?: not|n't)|doesn't|don't)\s+(?:currently |yet |even |really )?"
    rf"(?:have|own)\s+(?:any |a )?(?P<species>{_SPECIES_WORDS})\b"
    rf"|^(?:has|have|owns)\s+no\s+(?P<species2>{_SPECIES_WORDS})\b"
    rf"|^(?:(?:no|not)\b[\s,]*)?(?:no|not any)\s+(?P<species3>{_SPECIES_WORDS})\b",
    _I,
)
_HAS_COUNT = re.compile(
    rf"^{_ADVERBS}(?:has|owns|has got|is the (?:proud )?owner of|takes care of|cares for|"
    rf"is taking care of)\s+(?P<count>{_COUNT_WORDS})\s+(?:\w+\s+)?(?P<species>{_SPECIES_WORDS})\b",
    _I,
)
_HAS_ONE = re.compile(
    rf"^{_ADVERBS}(?:has|owns|has got)\s+(?:a|an)\s+(?:(?P<ordinal>second|third|fourth|fifth|"
    rf"sixth)\s+)?(?:\w+\s+){{0,2}}?(?P<species>{_SPECIES_WORDS})\b",
    _I,
)
_NAMED = re.compile(
    rf"^{_ADVERBS}(?:has|has had|owns)\s+(?:{_POSSESSIVE}\s+)?(?:\w+\s+)?"
    rf"(?P<species>{_SPECIES_WORDS})\s+(?:named|called)\s+(?P<names>[A-Z]\w+(?:,\s+[A-Z]\w+)*,?"
    r"\s+and\s+[A-Z]\w+)",
)
_GOT = re.compile(
    rf"^{_ADVERBS}(?:got|adopted|brought home|rescued|welcomed|bought|took home|has gotten|"
    r"has adopted|has got|got himself|got herself|added)\s+(?P<which>another|one more|"
    rf"a second|a third|a fourth|a fifth|a sixth|a new|a|an|(?!no\b|zero\b){_COUNT_WORDS})\s+"
    r"(?:\w+\s+){0,2}?"
    rf"(?P<species>{_SPECIES_WORDS})\b",
    _I,
)
_OWNED_COUNT = re.compile(
    rf"\b(?P<owner>his|her|their|my|[A-Z][a-z]+(?:'s|’s))\s+(?P<count>(?!no\b|one\b){_COUNT_WORDS})\s+"
    rf"(?:\w+\s+)?(?P<species>{_SPECIES_WORDS})\b",
)


def pets(predicate: str) -> list[Finding]:
    if (match := _NO_PETS.match(predicate)) is not None:
        species = match.group("species") or match.group("species2") or match.group("species3")
        return [Finding(f"pets:{_SPECIES[species.lower()]}", "0")]
    if (match := _NAMED.match(predicate)) is not None:
        names = re.split(r",\s+|\s+and\s+|,\s+and\s+", match.group("names"))
        species = _SPECIES[match.group("species").lower()]
        return [Finding(f"pets:{species}", str(len([n for n in names if n])))]
    if (match := _HAS_COUNT.match(predicate)) is not None:
        species = _SPECIES[match.group("species").lower()]
        return [Finding(f"pets:{species}", str(number_value(match.group("count"))))]
    if (match := _GOT.match(predicate)) is not None:
        which = match.group("which").lower()
        species = _SPECIES[match.group("species").lower()]
        if which in ("another", "one more"):
            value = "+"
        elif which not in ("a", "an", "a new") and not which.startswith("a "):
            value = "some"  # "adopted two kittens": some now, however many before
        elif (ordinal := which.removeprefix("a ")) in _ORDINALS:
            value = str(_ORDINALS[ordinal])
        else:
            value = "some"
        return [Finding(f"pets:{species}", value)]
    if (match := _HAS_ONE.match(predicate)) is not None:
        ordinal = match.group("ordinal")
        value = str(_ORDINALS[ordinal.lower()]) if ordinal else "some"
        return [Finding(f"pets:{_SPECIES[match.group('species').lower()]}", value)]
    return []


#: "Toby, Andrew's puppy": whoever's pet it is has one.
_OWNED_ONE = re.compile(
    r"\b(?P<owner>[A-Z][a-z]+)(?:'s|’s)\s+(?:new\s+|little\s+|rescue\s+|pet\s+)?"
    r"(?P<species>puppy|pup|dog|cat|kitten|turtle|tortoise|parrot|rabbit|bunny|hamster)\b",
)


def owned_counts(
    sentence: str, *, subject: str | None, speaker: str | None
) -> list[tuple[str, Finding]]:
    """ "her four dogs", "Audrey's four doggies" anywhere in a sentence: (owner, finding)."""
    found = []
    for match in _OWNED_COUNT.finditer(sentence):
        owner = match.group("owner").lower()
        if owner in ("his", "her", "their"):
            entity = subject
        elif owner == "my":
            entity = speaker
        else:
            entity = owner[:-2]
        if entity is None or re.search(r"\bother\s*$", sentence[: match.start()], _I):
            continue
        species = _SPECIES[match.group("species").lower()]
        found.append((entity, Finding(f"pets:{species}", str(number_value(match.group("count"))))))
    for match in _OWNED_ONE.finditer(sentence):
        species = _SPECIES[match.group("species").lower()]
        found.append((match.group("owner").lower(), Finding(f"pets:{species}", "some")))
    return found


# --- health -------------------------------------------------------------------------------------
_INJURED = re.compile(
    rf"\b(?:injured|hurt|sprained|broke|twisted|fractured|tore|pulled|strained|dislocated)\s+"
    rf"{_POSSESSIVE}\s+(?P<part>{BODY_PARTS})\b"
    rf"|\b(?:suffers|suffered|is suffering|has|had|got|sustained)\s+(?:from\s+)?(?:a|an)\s+"
    rf"(?:\w+\s+)?(?P<part2>{BODY_PARTS})\s+injury\b"
    r"|^(?:is|was|got|has been) (?:badly |seriously )?(?:injured|hurt)\b"
    r"|\b(?:injured|hurt)\s+(?:himself|herself|themselves|myself)\b"
    r"|\b(?:with|due to|from|because of|after)\s+(?:an?|this|the|that|his|her|my)\s+"
    r"(?:\w+\s+)?injury\b",
    _I,
)
_RECOVERED = re.compile(
    r"\b(?:has |is |have )?(?:fully |finally |completely )?(?:recovered|healed)\b"
    r"|\bable to (?:jog|run|walk|play|train|work out|exercise|dance|hike)\b[^.]*"
    r"\b(?:again|without (?:any )?pain|with no pain|pain[- ]free)\b",
    _I,
)
_RECOVERING = re.compile(r"^(?:is |has been )?(?:still )?(?:recovering|rehabbing|in rehab)\b", _I)
#: "the user's wrist is totally fine now", "my knee feels back to normal": a part well again.
_PART_WELL = re.compile(
    rf"^['’]s\s+(?:left\s+|right\s+)?(?:{BODY_PARTS})\s+(?:is|feels|has been)\s+(?:now\s+)?"
    r"(?:totally\s+|completely\s+|fully\s+|all\s+|much\s+|finally\s+)?"
    r"(?:fine|better|okay|ok|back to normal|good as new|healed)\b",
    _I,
)


def health(predicate: str) -> list[Finding]:
    if (match := _INJURED.search(predicate)) is not None and not re.search(
        r"\b(?:recovered|healed|recovering)\b", predicate, _I
    ):
        part = match.group("part") or match.group("part2") or "*"
        return [Finding(f"health:{part.lower()}", "injured")]
    if _RECOVERING.match(predicate):
        return [Finding("health:*", "recovering")]
    if _PART_WELL.match(predicate):
        return [Finding("health:*", "recovered")]
    if _RECOVERED.search(predicate) and not re.search(r"\b(?:not|never|yet)\b", predicate, _I):
        return [Finding("health:*", "recovered")]
    return []


# --- activities, results, decisions --------------------------------------------------------------
_STOPPED = re.compile(
    rf"^{_ADVERBS}(?:(?:had to |has had to |decided to )?(?:stop|quit|give up)|stopped|quit|"
    r"gave up|has given up|dropped out of|paused|put on hold|"
    r"no longer|doesn't|does not)\s+"
    r"(?!by\b|at\b|in\b|to\b|for\b|being\b)(?P<topic>.+?)(?:\s+(?:anymore|any more))?$",
    _I,
)
_STARTED = re.compile(
    rf"^{_ADVERBS}(?:started|began|took up|signed up for|enrolled in|joined|is taking|has been "
    r"taking|is learning|started learning|resumed|went back to|is back to|got back into|"
    r"volunteers|plays|practices|is practicing|attends|is attending|teaches|coaches|runs|"
    # Something had or held: "drives a Toyota Corolla" until "sold the Corolla".
    r"owns|drives|rents|leases|manages|leads|is training for|trains for)\s+"
    r"(?!to\b|feeling\b|thinking\b|a conversation\b|talking\b|care\b)(?P<topic>.+)$",
    _I,
)
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_WEEKDAY = re.compile(rf"\b{_DAY}(?=s?\b)", _I)
_PART_OF_DAY = r"(?:morning|afternoon|evening|night)s?"
#: How often something recurs: "every Saturday morning", "on Tuesdays", "twice a week".
RECURRENCE = re.compile(
    rf"\s*\b(?:every|each)\s+(?:other\s+)?(?:day|week|weekend|month|year|{_DAY}|{_PART_OF_DAY})s?"
    rf"(?:\s+{_PART_OF_DAY})?\b"
    rf"|\s*\bon\s+{_DAY}s(?:\s+(?:and|or)\s+{_DAY}s)?(?:\s+{_PART_OF_DAY})?\b"
    r"|\s*\b(?:once|twice|[a-z0-9]+\s+times)\s+(?:a|per|each)\s+(?:day|week|month|year)\b"
    # "drinks three coffees a day": how much, every day.
    r"|(?<=s)\s+(?:a|per)\s+(?:day|week)\b"
    r"|\s*\b(?:daily|nightly|weekly|biweekly|fortnightly|monthly)\b",
    _I,
)
#: "goes to the gym three times a week", "has therapy every Monday": a present-tense habit
#: (read only with a :data:`RECURRENCE`).
_ROUTINE = re.compile(rf"^{_ADVERBS}(?P<topic>(?!is\b|was\b)[a-z]+s\s+.+)$", _I)
#: Verbs that say only that something is done, not what: "goes to the gym" and "stopped going
#: to the gym" are both about the gym.
_BARE_VERBS = re.compile(
    r"^(?:go|goes|going|went|do|does|doing|did|attends?|attending|has|have|having|takes?|"
    r"taking|gets?|getting)\s+",
    _I,
)
#: Verbs that name the activity itself: "volunteers at the shelter" is about volunteering.
_ACTIVITY_VERBS = frozenset({"volunteer", "play", "practic", "teach", "coach", "train"})
#: "stopped the deploy on Friday because of a bug": one occasion of a thing halted, not a habit
#: or a holding ended (against "stopped deploying on Fridays", "stopped the medication").
_ONE_OCCASION = re.compile(
    r"^(?:stopped|paused)\s+(?:the|a|an|this|that)\s+\S+.*\b(?:because|due to|"
    r"today|yesterday|tonight|last night|this (?:morning|afternoon|evening)|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s))",
    _I,
)
_NEGATED_ONLY = re.compile(r"^(?:doesn't|does not)\s+(?!\S+\s+(?:anymore|any more)\b)", _I)
#: "doesn't drink coffee", "never smokes": a habit the subject abstains from, which a later
#: "started drinking coffee" ends. Only a habit's verb with a short plain object: "doesn't
#: drink coffee after 3pm" or "doesn't know the answer" say nothing a start would change.
_ABSTAINS = re.compile(
    r"^(?:doesn't|does not|never|don't|do not)\s+"
    r"(?P<topic>(?P<verb>drink|smoke|vape|eat|drive|cook|gamble|exercise|swim|cycle|bike|run|"
    r"ski|surf|dance|sing|paint|knit|garden|meditate|play)s?"
    r"(?:\s+(?!(?:after|before|on|at|in|during|when|while|with|for|until|unless|if|around|"
    r"near|outside|inside|alone|much|often|very|that|this)\b)[a-z'-]+){0,2})$",
    _I,
)
_TEST = r"(?:[\w-]+\s+){0,3}?(?:test|exam|interview|interviews|audition|assessment|certification)s?"
_OBJECT = rf"(?:{_POSSESSIVE}\s+|a |an )?"
_FAILED = re.compile(
    rf"^{_ADVERBS}(?:failed|flunked|did(?: not|n't) pass|bombed)\s+{_OBJECT}(?P<topic>{_TEST})",
    _I,
)
_PASSED = re.compile(
    rf"^{_ADVERBS}(?:passed|aced|cleared|nailed)\s+{_OBJECT}(?P<topic>{_TEST})"
    rf"|^{_ADVERBS}retook\s+{_OBJECT}(?P<topic2>{_TEST})[^.]*\b(?:passed|positive results?|"
    r"good results?)\b",
    _I,
)
_DECIDED = re.compile(
    rf"^{_ADVERBS}(?:decided|agreed|chose|opted|resolved)\s+(?P<negation>not\s+)?to\s+(?P<topic>.+)$",
    _I,
)
_REVERSED = re.compile(
    rf"^{_ADVERBS}(?:reversed|dropped|cancelled|canceled|abandoned|scrapped|called off|backed "
    rf"out of)\s+(?:{_POSSESSIVE}\s+)?(?:decision|plan|idea)s?\s+to\s+(?P<topic>.+)$",
    _I,
)


_BREAK = re.compile(
    r"\b(?:take|took|taking|takes)\s+a\s+break\s+from\s+(?!(?:work|school|life|everything|"
    r"it all|the city|routine|studying|the job|my job|his job|her job|life's|the office|"
    r"social media|the noise|the stress|the craziness)\b)(?P<topic>.+)$",
    _I,
)
#: "took a break from work to check out a cafe": a pause for something else, not a stop.
_PURPOSE = re.compile(r"\s+to\s+\w+", _I)


#: "left the band", "quit the book club": a group someone no longer takes part in.
_LEFT_GROUP = re.compile(
    rf"^{_ADVERBS}(?:left|quit|dropped out of)\s+(?P<topic>(?:the|their|his|her|my|our)\s+"
    r"(?:[\w'’-]+\s+){0,2}?(?:band|team|club|choir|group|league|class|course|program|orchestra|"
    r"committee|board|gym|troupe|crew))\b",
    _I,
)


#: "sold the bakery", "cancelled the Planet Fitness membership", "stepped down as team lead",
#: "traded in the Civic for a Subaru", "handed the mobile app over to Raj": something the
#: subject had, held or ran, ended. A definite object only: "sold a painting" ends nothing a
#: memory could have said was held; "sold out", "dropped by", "dropped the kids off" are not ends.
_ENDED = re.compile(
    rf"^{_ADVERBS}(?:sold|traded in|got rid of|gave away|closed|cancell?ed|"
    r"dropped(?!\s+(?:\S+\s+){1,3}?off\b)|ditched|stepped down (?:as|from)|"
    r"resigned (?:as|from)|retired (?:as|from)|moved out of|stopped (?:seeing|using)|"
    r"handed(?: over)?)\s+"
    r"(?!out\b|off\b|by\b|in\b|at\b|to\b|a\b|an\b|some\b|one\b)(?P<topic>.+?)"
    r"(?:\s+over\s+to\b.*)?$",
    _I,
)
#: An end for a while, not for good: "closed the food truck early", "dropped the class for the
#: summer".
_FOR_A_WHILE = re.compile(
    r"\b(?:early|temporarily|for now|for a while|for the (?:day|night|evening|weekend|week|"
    r"holidays?|season|summer|winter)|for (?:a|the) (?:few|couple)|until|today|tonight|"
    r"for (?:a|one|two|three) (?:day|night|week|weekend|month)s?|"
    r"this (?:morning|afternoon|evening))\b",
    _I,
)
#: A stop for a spell, not for good: "stopped jogging for a week because of the rain".
_FOR_A_SPELL = re.compile(
    r"\b(?:temporarily|for now|for a while|for (?:a|one|two|three|a few|a couple of) "
    r"(?:days?|nights?|weeks?|weekends?|months?)|until)\b",
    _I,
)
#: "is the team lead", "is the product manager for the mobile app", "is the lead singer of the
#: band", "is on the night nursing team": a position the subject holds, which a later "stepped
#: down as team lead" or "handed the mobile app over" ends.
_HOLDS_POSITION = re.compile(
    rf"^{_ADVERBS}(?:is|are)\s+(?:the|our|their|his|her|my)\s+"
    r"(?P<topic>(?:[\w-]+\s+){0,3}?(?:lead|leader|manager|head|director|owner|captain|chair|"
    r"president|coach|maintainer|organi[sz]er|admin|administrator|coordinator|treasurer|"
    r"secretary|founder|co-founder|sponsor|editor|ceo|cto|cfo|coo|cio|cmo|vp|"
    r"chief [a-z]+ officer)"
    r"(?:\s+(?:of|for|at|on)\s+.+)?"
    # Any position named by what it belongs to: "the lead singer of the band".
    r"|(?:[\w-]+\s+){1,3}?(?:of|for|in|at)\s+(?:the|our|their|his|her|my)\s+.+)$"
    rf"|^{_ADVERBS}(?:is|are)\s+(?:on|in)\s+(?:the|our|their|his|her|my)\s+"
    r"(?P<group>(?:[\w-]+\s+){0,3}?(?:team|board|committee|crew|squad|rotation|panel))\b",
    _I,
)


#: "is a smoker", "is a keen runner": a habit told by who does it ("quit smoking" ends it).
_DOER = re.compile(
    rf"^{_ADVERBS}is an?\s+(?:(?:heavy|regular|social|daily|chain|keen|avid|casual|big)\s+)?"
    r"(?P<doer>smoker|drinker|vaper|runner|swimmer|climber|gamer|surfer|skater|drummer|"
    r"gambler)$",
    _I,
)
#: Why something stopped is not what stopped: "quit basketball to focus on his studies".
_WHAT_FOR = re.compile(
    r"\s+(?:in order\s+)?to\s+(?:focus|spend|save|concentrate|take care|care for|look after|"
    r"study|rest|recover|heal|pursue|prepare|work on|make time|free up|deal with|be with|"
    r"help)\b.*$",
    _I,
)
#: "now teaches guitar at the community center": what holds now, told against what held.
_NOW = re.compile(r"^(?:(?:currently|just|only)\s+)*now\s", _I)


#: What an activity is a kind of, where its words do not say it: training for a marathon is
#: running, a glass of wine is drinking alcohol ("gave up running", "quit drinking alcohol").
_KIND_OF = {
    "marathon": "run",
    "jog": "run",
    "5k": "run",
    "10k": "run",
    "triathlon": "run",
    "wine": "alcohol",
    "beer": "alcohol",
    "cocktail": "alcohol",
    "whisky": "alcohol",
    "whiskey": "alcohol",
    "cigarette": "smok",
    "vape": "smok",
    "espresso": "coffee",
    "latte": "coffee",
}


#: The words of each kind: a search for "gave up running" looks for "marathon" too.
KIND_MEMBERS = {
    kind: " ".join(sorted(word for word, of in _KIND_OF.items() if of == kind))
    for kind in set(_KIND_OF.values())
}


def _activity_topic(raw: str) -> frozenset[str]:
    """What an activity is, without how often, and what it is a kind of: "a pottery class on
    Tuesdays" → pottery; "training for a marathon" → train, marathon, run."""
    topic = words(value_text(_BARE_VERBS.sub("", RECURRENCE.sub("", raw.strip()))))
    return topic | {_KIND_OF[word] for word in topic if word in _KIND_OF}


def activity(predicate: str) -> list[Finding]:
    if (match := _BREAK.search(predicate)) is not None:
        topic_text = match.group("topic")
        if _PURPOSE.search(topic_text):
            return []
        topic = words(value_text(topic_text))
        return [Finding("activity", STOPPED, topic)] if topic else []
    if (match := _LEFT_GROUP.match(predicate)) is not None:
        topic = _activity_topic(match.group("topic"))
        return [Finding("activity", STOPPED, topic)] if topic else []
    if (match := _ENDED.match(predicate)) is not None and not _FOR_A_WHILE.search(predicate):
        topic = words(value_text(match.group("topic")))
        return [Finding("activity", STOPPED, topic)] if topic else []
    if (match := _DOER.match(predicate)) is not None:
        # Read as the doing: "smoker" as "smoking", "swimmer" as "swimming".
        return [Finding("activity", ACTIVE, words(f"{match.group('doer').lower()[:-2]}ing"))]
    if (match := _HOLDS_POSITION.match(predicate)) is not None:
        # Whole: "for the mobile app" says which position, where a value would end.
        topic = words(match.group("topic") or match.group("group"))
        return [Finding("activity", ACTIVE, topic)] if topic else []
    if (
        (match := _STOPPED.match(predicate)) is not None
        and not _NEGATED_ONLY.match(predicate)
        and not _ONE_OCCASION.match(predicate)
        and not _FOR_A_SPELL.search(predicate)
    ):
        topic = _activity_topic(_WHAT_FOR.sub("", match.group("topic")))
        return [Finding("activity", STOPPED, topic)] if topic else []
    if (match := _ABSTAINS.match(predicate)) is not None:
        # The verb as "-ing" too: "never smokes" is what "started smoking" ends.
        verb = match.group("verb").lower()
        doing = verb.removesuffix("e") + "ing"
        topic = _activity_topic(match.group("topic")) | words(doing)
        return [Finding("activity", STOPPED, topic)]
    if (match := _STARTED.match(predicate) or _ROUTINE.match(predicate)) is not None and (
        match.re is _STARTED or RECURRENCE.search(predicate)
    ):
        topic = _activity_topic(match.group("topic"))
        topic |= words(predicate[: match.start("topic")]) & _ACTIVITY_VERBS
        now = bool(_NOW.match(predicate)) and not _ANOTHER_ROLE.search(predicate)
        days = frozenset(day.lower() for day in _WEEKDAY.findall(match.group("topic")))
        return [Finding("activity", ACTIVE, topic, now=now, days=days)] if topic else []
    return []


# --- one value of a kind switched for another -----------------------------------------------------
#: "switched to day shifts", "transferred to the day team", "upgraded to Kubernetes 1.29",
#: "moved to a bigger apartment": the thing named by its kind (the last word) and what sets
#: it apart (the words before it, or a version after a name).
_SWITCHED_KIND = re.compile(
    rf"^{_ADVERBS}(?:has\s+|have\s+|was\s+|were\s+|has been\s+|have been\s+|got\s+)?"
    r"(?:switched|changed|moved|transferred|upgraded|downgraded|migrated)"
    r"(?:\s+(?!to\b|from\b)[\w-]+){0,3}?\s+to\s+(?P<target>.+)$",
    _I,
)
#: "I've switched to VS Code", "we moved over to Linear": a switch of the subject's own tool, with
#: nothing named between the verb and its target ("migrated the billing service to …" moves
#: the service, not everything the team uses).
_SWITCHED_TO_TOOL = re.compile(
    rf"^{_ADVERBS}(?:has\s+|have\s+)?(?:switched|changed|moved|migrated|upgraded|downgraded|"
    r"went)\s+(?:over\s+|back\s+)?to\s+(?P<target>.+)$",
    _I,
)
#: A name and its version: "Kubernetes 1.29", "Python 3.12", "Postgres v16".
_VERSIONED = re.compile(r"\b(?P<name>[A-Za-z][\w+#-]*)\s+v?(?P<version>\d+(?:\.\d+)+|\d+)\b")
#: A kind's name is a noun: words a target ends on that name no kind.
_NOT_A_KIND = word_set("now again instead too well last week month year day today soon")


_WHERE_DONE = re.compile(r"\s+(?:at|in|on)\s+(?:the|a|an|his|her|their|my|our|its)\s+.*$", _I)
_DOTTED_NAME = re.compile(r"^[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+\.?$")


def switched(predicate: str) -> list[Finding]:
    """A switch to another value of a kind: ``switched:<kind>`` with what sets the new value
    apart (compared by :func:`phrases` with what an older memory said of the same kind)."""
    if (match := _SWITCHED_KIND.match(predicate)) is None:
        return []
    target = re.sub(r"^(?:a|an|the)\s+", "", match.group("target"), flags=_I)
    # Where it is done is no part of the value: "switched to day shifts at the hospital".
    target = _WHERE_DONE.sub("", target)
    # "switched to VS Code": a tool of a kind, which replaces the one of that kind in use ("to
    # Kubernetes 1.29" is compared by its version below).
    tool = _SWITCHED_TO_TOOL.match(predicate)
    name = value_text(tool.group("target")) if tool is not None else ""
    if _DOTTED_NAME.match(target):
        # "Fly.io" is one name, not a value of a kind "io".
        return [Finding("tool:*", target.rstrip(".").lower(), now=True)] if name else []
    if name and _VERSIONED.match(target) is None and tool_kind(name) is not None:
        return [Finding("tool:*", name.lower(), now=True)]
    if (version := _VERSIONED.match(target)) is not None:
        kind, marks = version.group("name").lower(), frozenset({version.group("version")})
    else:
        said = content_words(value_text(target))
        if len(said) < 2 or said[-1] in _NOT_A_KIND:
            return []  # one word names a thing, not a value of a kind ("moved to Paris")
        kind, marks = said[-1], frozenset(said[:-1])
    return [Finding(f"{SWITCHED}:{kind}", " ".join(sorted(marks)), topic=marks)]


def phrases(predicate: str) -> list[Finding]:
    """Every kind the clause names with something that sets it apart, as a value a later
    switch can replace: "works night shifts" → ``phrase:shift`` (the clause's words as the
    topic: "night", "work", …); "runs Kubernetes 1.27" → ``phrase:kubernetes``. Read only
    where a newer memory says it switched, never to decide anything alone."""
    if unsettled(predicate):
        return []
    said = content_words(predicate)
    versions = list(_VERSIONED.finditer(predicate))
    topic = frozenset(said) | {match.group("version") for match in versions}
    kinds = {match.group("name").lower() for match in versions} | set(said[1:])
    return [Finding(f"{PHRASE}:{kind}", "", topic=topic) for kind in sorted(kinds)]


# --- age ----------------------------------------------------------------------------------------
_AGE_WORDS = "|".join(CARDINALS)
_AGE = re.compile(
    rf"^{_ADVERBS}(?:is (?:now )?(?P<years>\d{{1,3}}|{_AGE_WORDS}) years? old"
    # "The user is 34.": a number alone is an age.
    rf"|is (?:now )?(?P<bare>\d{{1,3}})(?:\s+now)?\.?$"
    rf"|(?:turned|has turned) (?P<turned>\d{{1,3}}|{_AGE_WORDS}))\b"
    # "turned three in May", not "turned three pages" or "turned two of them down".
    r"(?!\s+(?!in\b|on\b|last\b|this\b|years?\b)[a-z])",
    _I,
)


def age(predicate: str) -> list[Finding]:
    """How old someone is: "is 30 years old", then "just turned 31" ("two", "three": the same)."""
    if (match := _AGE.match(predicate)) is None:
        return []
    said = match.group("years") or match.group("turned") or match.group("bare")
    return [Finding("key:age", str(number_value(said)))]


# --- children and school grade -------------------------------------------------------------------
_GRADE_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
}  # fmt: skip
_GRADE_NUMBER = rf"(?P<grade>{'|'.join(_GRADE_ORDINALS)}|\d{{1,2}}(?:st|nd|rd|th))"
#: "is in third grade", "started fourth grade this fall", "is a 5th grader".
_GRADE = tuple(
    re.compile(pattern, _I)
    for pattern in (
        rf"^{_ADVERBS}(?:is|has been)\s+(?:now\s+)?in\s+(?:the\s+)?{_GRADE_NUMBER}\s+grade\b",
        rf"^{_ADVERBS}(?:started|entered|began|moved up to|is starting)\s+(?:the\s+)?"
        rf"{_GRADE_NUMBER}\s+grade\b",
        rf"^{_ADVERBS}is\s+(?:now\s+)?(?:a|an)\s+{_GRADE_NUMBER}[ -]grader\b",
        # Kindergarten, the grade before the first: "is in kindergarten".
        rf"^{_ADVERBS}(?:is|has been|started|entered|began|is starting)\s+(?:now\s+)?"
        r"(?:in\s+)?(?P<grade>kindergarten)\b",
    )
)
_KIDS = r"(?:children|child|kids|kid|babies|baby)"
#: "have two kids", "has one child"; "had their second child", "welcomed a third baby".
_HAS_CHILDREN = re.compile(
    rf"^{_ADVERBS}(?:has|have)\s+(?P<count>{_COUNT_WORDS})\s+{_KIDS}\b(?!\s+(?:in|at|on)\b)", _I
)
_CHILD_BORN = re.compile(
    rf"^{_ADVERBS}(?:had|welcomed|gave birth to)\s+(?:their|his|her|our|my|a)\s+"
    rf"(?P<ordinal>{'|'.join(_ORDINALS)})\s+(?:child|kid|baby|son|daughter)\b",
    _I,
)


def family(predicate: str) -> list[Finding]:
    """How many children someone has ("have one child", then "had their second child") and a
    child's school grade ("is in third grade", then "started fourth grade")."""
    if match := next(filter(None, (grade.match(predicate) for grade in _GRADE)), None):
        grade = match.group("grade").lower()
        if grade == "kindergarten":
            number = 0
        else:
            number = _GRADE_ORDINALS.get(grade) or int(re.sub(r"\D", "", grade))
        return [Finding("key:grade", str(number))]
    if (match := _HAS_CHILDREN.match(predicate)) is not None:
        return [Finding("key:children", str(number_value(match.group("count"))))]
    if (match := _CHILD_BORN.match(predicate)) is not None:
        return [Finding("key:children", str(_ORDINALS[match.group("ordinal").lower()]))]
    return []


# --- preferences and conditions ------------------------------------------------------------------
_LIKES = re.compile(
    rf"^{_ADVERBS}(?:prefers|likes|loves|enjoys|adores|is (?:a (?:big |huge )?fan of|"
    r"passionate about|into))\s+(?P<topic>.+)$",
    _I,
)
_DISLIKES = re.compile(
    rf"^{_ADVERBS}(?:dislikes|hates|detests|can't stand|cannot stand|doesn't like|does not like|"
    r"doesn't enjoy|does not enjoy|is not a fan of|isn't a fan of|no longer (?:likes|enjoys|"
    r"loves))\s+(?P<topic>.+)$",
    _I,
)


#: "prefers light mode in the editor", "prefers aisle seats on flights": one choice among
#: others for a setting, which a later other choice for the same setting changes.
CHOICE = "choice"
_PREFERS = re.compile(
    rf"^{_ADVERBS}prefers\s+(?P<choice>.+?)(?:\s+(?:over|to|rather than)\s+(?P<over>.+?))?"
    r"(?:\s+(?:in|for|on|when|with|at|during)\s+(?P<setting>.+))?$",
    _I,
)


#: "wants summaries in bullet points", "likes replies as short paragraphs": how a kind of
#: thing is wanted, the thing as the setting.
_WANTS_AS = re.compile(
    rf"^{_ADVERBS}(?:wants|likes|asks for|expects)\s+(?P<thing>(?:[\w-]+\s+){{0,2}}?[\w-]+)\s+"
    r"(?:in|as)\s+(?P<form>.+)$"
    # "asked to switch responses back to English": the same want, told as the request.
    rf"|^{_ADVERBS}(?:asked|has asked|wants|would like)\s+(?:me\s+|the assistant\s+|us\s+)?to\s+"
    r"(?:switch|change|keep)\s+(?P<thing2>(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:back\s+)?"
    r"(?:to|in)\s+(?P<form2>.+)$",
    _I,
)


def _choice(predicate: str) -> list[Finding]:
    if (wanted := _WANTS_AS.match(predicate)) is not None:
        form = value_text(wanted.group("form") or wanted.group("form2")).lower()
        thing = words(wanted.group("thing") or wanted.group("thing2"))
        if not words(form) or not thing:
            return []
        return [Finding(CHOICE, form, thing, head=form.split()[-1])]
    match = _PREFERS.match(predicate)
    if match is None:
        return []
    chosen = value_text(match.group("choice")).lower()
    if not words(chosen):
        return []
    setting = words(value_text(match.group("setting") or ""))
    head = chosen.split()[-1]
    over = value_text(match.group("over") or "").lower()
    return [Finding(CHOICE, chosen, setting, replaced=over, head=head)]


def preference(predicate: str) -> list[Finding]:
    """What someone likes or dislikes ("prefers short answers", "hates cilantro"): a later
    opposite about the same thing changes it; what someone prefers for a setting, a later
    other choice for it."""
    for pattern, value in ((_DISLIKES, "dislikes"), (_LIKES, "likes")):
        if (match := pattern.match(predicate)) is not None:
            topic = words(value_text(match.group("topic")))
            return [Finding("preference", value, topic), *_choice(predicate)] if topic else []
    return _choice(predicate) if _WANTS_AS.match(predicate) else []


_CONDITION = re.compile(
    r"^(?:is|has been|was)\s+(?:severely\s+|very\s+|mildly\s+|deathly\s+)?allergic\s+to\s+"
    r"(?P<topic>.+)$"
    r"|^(?:has|have)\s+(?:an?\s+|a severe\s+)?(?P<topic2>[\w -]+?)\s+allerg(?:y|ies)\b"
    r"|^(?:was|got|has been|is)\s+(?:recently\s+|just\s+)?diagnosed\s+with\s+(?P<topic3>.+)$"
    r"|^(?:has|have|lives with|is living with)\s+(?P<topic4>(?:type [12] )?diabetes|asthma|"
    r"celiac(?: disease)?|adhd|migraines|arthritis|epilepsy|high blood pressure|"
    r"chronic \w+(?: \w+)?|crohn's(?: disease)?|lupus|a heart condition)\b"
    # "is lactose intolerant", "is gluten-intolerant", "is diabetic".
    r"|^(?:is|has been)\s+(?:(?:also|now|severely|very|mildly)\s+)?(?P<topic5>(?:lactose|gluten|"
    r"fructose|histamine|caffeine|alcohol)[ -]intolerant|diabetic|celiac|anemic|asthmatic)\b",
    _I,
)


_CONDITION_ENDED = re.compile(
    r"^(?:is\s+)?(?:no longer|not|isn't|is not)\s+allergic\s+to\s+(?P<topic>.+)$"
    # "the user's cat allergy went away": an allergy told of its owner, gone.
    r"|^['’]s\s+(?P<topic2>[\w-]+(?:\s+[\w-]+)?)\s+allergy\s+(?:has\s+)?(?:went away|gone away|"
    r"is gone|disappeared|cleared up|resolved)\b",
    _I,
)


def condition(predicate: str) -> list[Finding]:
    """A lasting health condition: an allergy, a diagnosis ("is allergic to peanuts"); "no
    longer allergic to peanuts" ends it."""
    if (ended := _CONDITION_ENDED.match(predicate)) is not None:
        topic = words(value_text(ended.group("topic") or ended.group("topic2")))
        return [Finding("condition", "none", topic)] if topic else []
    if (match := _CONDITION.match(predicate)) is None:
        return []
    if named := match.group("topic4") or match.group("topic5"):
        topic = words(named)  # "type 2 diabetes": the number is part of the name
    else:
        topic = words(value_text(match.group("topic") or match.group("topic2") or ""))
        topic |= words(value_text(match.group("topic3") or ""))
    return [Finding("condition", "has", topic)] if topic else []


#: Where an application stands: applied → interviewed → accepted or rejected.
_PROCESS = [
    (
        re.compile(
            rf"^{_ADVERBS}(?:applied|sent (?:in )?(?:an |{_POSSESSIVE} )?applications?)\s+"
            r"(?:to|for)\s+(?P<topic>.+)$",
            _I,
        ),
        "applied",
    ),
    (
        re.compile(
            rf"^{_ADVERBS}(?:had|got|landed|did|attended)\s+(?:an |a |{_POSSESSIVE} )?(?:\w+\s+)?"
            r"interviews?\s+(?:for|with|at)\s+(?P<topic>.+)$"
            rf"|^{_ADVERBS}interviewed\s+(?:for|with|at)\s+(?P<topic2>.+)$",
            _I,
        ),
        "interviewed",
    ),
    (
        re.compile(
            rf"^{_ADVERBS}(?:got|was|has been|been|is)\s+(?:accepted|admitted|selected|picked|"
            r"chosen|offered a place)\s+(?:for|into|to|by|as|at|in)\s+(?P<topic>.+)$"
            rf"|^{_ADVERBS}got into\s+(?P<topic2>.+)$",
            _I,
        ),
        "accepted",
    ),
    (
        re.compile(
            rf"^{_ADVERBS}(?:got|was|has been|been)\s+(?:rejected|turned down)\s+(?:for|from|by)\s+"
            r"(?P<topic>.+)$"
            rf"|^{_ADVERBS}(?:received|got)\s+(?:a |an )?(?:\w+\s+)?rejection(?: letter| email)?\s+"
            r"(?:from|for)\s+(?P<topic2>.+)$",
            _I,
        ),
        "rejected",
    ),
]
#: Words that name the kind of step rather than what it is for: left out of a topic.
_PROCESS_WORDS = frozenset({"interview", "application", "offer", "place", "spot"})


def _head(topic: str) -> str:
    """The head noun of a topic: its last word before a preposition ("design internship at
    X" → "internship")."""
    core = re.split(r"\s+(?:at|in|with|for|from|of|on|by)\s+", topic, maxsplit=1)[0]
    found = sorted(words(core), key=lambda word: core.lower().rfind(word[:4]))
    return found[-1] if found else ""


def result(predicate: str) -> list[Finding]:
    for pattern, status in _PROCESS:
        if (match := pattern.match(predicate)) is not None:
            raw = value_text(match.group("topic") or match.group("topic2") or "")
            topic = words(raw) - _PROCESS_WORDS
            if topic:
                return [Finding("result", status, topic, head=_head(raw))]
    if (match := _PASSED.match(predicate)) is not None:
        topic = words(match.group("topic") or match.group("topic2"))
        return [Finding("result", "passed", topic)]
    if (match := _FAILED.match(predicate)) is not None:
        return [Finding("result", "failed", words(match.group("topic")))]
    return []


def decision(predicate: str) -> list[Finding]:
    if (match := _REVERSED.match(predicate)) is not None:
        return [Finding("decision", "no", words(value_text(match.group("topic"))))]
    if (match := _DECIDED.match(predicate)) is not None:
        value = "no" if match.group("negation") else "yes"
        return [Finding("decision", value, words(value_text(match.group("topic"))))]
    return []


# --- tools and settings ---------------------------------------------------------------------------
_SWITCHED = re.compile(
    rf"^{_ADVERBS}(?:switched|moved|migrated|changed|went|converted|transitioned|upgraded)\s+"
    r"(?:over\s+)?from\s+(?P<old>.+?)\s+to\s+(?P<new>.+?)(?:\s+for\s+(?P<topic>.+))?$",
    _I,
)
_SWITCHED_TO = re.compile(
    rf"^{_ADVERBS}(?:switched|migrated|changed|converted|transitioned)\s+(?:over\s+)?to\s+"
    r"(?P<new>.+?)\s+for\s+(?P<topic>.+)$",
    _I,
)
#: "migrated the billing service from Postgres to MySQL": what changed named between the verb
#: and its old value.
_SWITCHED_OBJECT = re.compile(
    rf"^{_ADVERBS}(?:switched|moved|migrated|converted|ported|transitioned)\s+"
    r"(?P<topic>(?:the|our|their|his|her|its|my)\s+.+?)\s+(?:over\s+)?from\s+(?P<old>.+?)"
    r"\s+to\s+(?P<new>.+)$",
    _I,
)
_USES = re.compile(
    rf"^{_ADVERBS}(?:uses|is using|has been using|relies on|works with|runs)\s+(?P<value>.+?)"
    r"\s+(?:for|as (?:the |a |an |its |our |their |his |her )?)(?P<topic>.+?)"
    r"(?:\s+instead of\s+(?P<old>.+))?$",
    _I,
)
#: "The team uses Jira": a tool named without what for; a later "switched from Jira to …"
#: changes it.
_USES_PLAIN = re.compile(
    rf"^{_ADVERBS}(?:uses|is using|has been using|relies on)\s+(?P<value>.+)$", _I
)
_INSTEAD = re.compile(
    rf"^{_ADVERBS}(?:uses|is using|prefers|chose|went with|picked)\s+(?P<value>.+?)\s+"
    r"(?:instead of|rather than|over)\s+(?P<old>.+)$",
    _I,
)


#: What a project's thing is built on: "the database runs on MySQL 5.7", "the API is written in
#: Flask", then "the database was migrated to PostgreSQL 15". Read only of a project's things
#: (``claims``): "Maria was moved to the night shift" moves a person, not a platform.
PLATFORM = "tool:platform"
#: A platform is named, with its version if any: "PostgreSQL 15", "Python 3.12", "FastAPI";
#: "moved to a bigger server" names none.
PLATFORM_NAME = r"(?P<value>(?-i:[A-Z])[\w.+#-]*(?:\s+(?:(?-i:[A-Z])[\w.+#-]*|v?\d[\w.]*))*)"
_PLATFORM = re.compile(
    rf"^{_ADVERBS}(?:runs on|runs|is running on|is running|is written in|"
    r"is built (?:on|with|in)|is hosted on|is deployed on|is powered by)\s+" + PLATFORM_NAME,
    _I,
)
_REPLATFORMED = re.compile(
    rf"^{_ADVERBS}(?:(?:was|were|has been|got|is now)\s+)?(?:migrated|moved|ported|switched|"
    r"rewritten|converted|upgraded)\s+(?:over\s+)?(?:to|in|into|onto)\s+" + PLATFORM_NAME,
    _I,
)


def _tool(topic: str | None) -> str:
    return "tool:" + " ".join(sorted(words(value_text(topic)))) if topic else "tool:*"


#: "replaced the MacBook Air with a ThinkPad": the first is no longer used.
_REPLACED_WITH = re.compile(
    rf"^{_ADVERBS}(?:replaced|swapped)\s+(?:(?:the|her|his|their|my|our|its)\s+)?(?P<old>.+?)\s+"
    r"(?:with|for)\s+(?P<value>.+)$",
    _I,
)
#: "bought a MacBook Pro to replace the Dell": the same, told by what was got in its place.
_GOT_TO_REPLACE = re.compile(
    rf"^{_ADVERBS}(?:bought|got|purchased|ordered|picked up|leased|adopted)\s+"
    r"(?:(?:a|an|the|a new|another)\s+)?(?P<value>.+?)\s+to\s+replace\s+"
    r"(?:(?:the|her|his|their|my|our|its)\s+)?(?:old\s+)?(?P<old>.+)$",
    _I,
)


def tools(predicate: str) -> list[Finding]:
    if (match := _PLATFORM.match(predicate)) is not None:
        return [Finding(PLATFORM, match.group("value").rstrip(".").lower())]
    if (match := _REPLATFORMED.match(predicate)) is not None:
        return [Finding(PLATFORM, match.group("value").rstrip(".").lower(), now=True)]
    if (match := _SWITCHED.match(predicate) or _SWITCHED_OBJECT.match(predicate)) is not None:
        return [
            Finding(
                _tool(match.group("topic")),
                value_text(match.group("new")).lower(),
                replaced=value_text(match.group("old")).lower(),
            )
        ]
    if (match := _SWITCHED_TO.match(predicate)) is not None:
        return [Finding(_tool(match.group("topic")), value_text(match.group("new")).lower())]
    if (match := _USES.match(predicate)) is not None:
        topic = match.group("topic")
        if words(value_text(topic)):
            return [
                Finding(
                    _tool(topic),
                    value_text(match.group("value")).lower(),
                    replaced=value_text(match.group("old") or "").lower(),
                )
            ]
    if (
        match := _INSTEAD.match(predicate)
        or _REPLACED_WITH.match(predicate)
        or _GOT_TO_REPLACE.match(predicate)
    ) is not None:
        return [
            Finding(
                "tool:*",
                value_text(match.group("value")).lower(),
                replaced=value_text(match.group("old")).lower(),
            )
        ]
    if (match := _USES_PLAIN.match(predicate)) is not None:
        value = value_text(match.group("value")).lower()
        return [Finding("tool:*", value)] if value else []
    return []


_AUX_ADVERB = re.compile(
    r"^(has|have|had|is|was)\s+(?:(?:now|recently|just|finally|also|already|really|officially|"
    r"actually|since|currently|still|happily)\s+)+",
    _I,
)

#: Findings that make the clause's activity reading redundant ("joined Stripe as an engineer"
#: is a job; "moved to Lisbon", a home).
# --- school, the way to work --------------------------------------------------------------------
_SCHOOL_WORD = (
    r"(?:school|elementary|preschool|pre-school|kindergarten|academy|college|university|"
    r"high|nursery|daycare|student|grade)"
)
_INSTITUTION = r"(?P<school>(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)*)"
#: "goes to Lincoln Elementary", "transferred to Oak Park School", "started middle school at
#: Roosevelt", "is a student at MIT": the school someone attends, one at a time.
_ATTENDS = re.compile(
    rf"^{_ADVERBS}(?P<verb>attends|goes to|transferred to|switched to|moved to|enrolled (?:at|in)|"
    rf"is (?:enrolled|in (?:[\w-]+\s+)?grade) at|"
    rf"started (?:(?:[\w-]+\s+){{0,2}}?{_SCHOOL_WORD}\s+)?at)\s+{_INSTITUTION}",
    _I,
)
_GRADUATED = re.compile(rf"^{_ADVERBS}(?:graduated|graduates|finished) from\s+{_INSTITUTION}", _I)


def school(predicate: str) -> list[Finding]:
    if (match := _GRADUATED.match(predicate)) is not None:
        # A student's school is read as where they are (employment): graduating leaves it.
        named = match.group("school").lower()
        return [
            Finding("school", "graduated", replaced=named),
            Finding("employer", "none", replaced=named),
        ]
    if (match := _ATTENDS.match(predicate)) is None:
        return []
    named = match.group("school")
    if not re.search(rf"\b{_SCHOOL_WORD}\b", f"{match.group('verb')} {named}", _I):
        return []  # "goes to Paris", "moved to Denver": a place, not a school
    return [Finding("school", value_text(named).lower())]


#: "drives to work", "now takes the train to the office", "bikes to school": how someone gets
#: there, one way at a time.
_COMMUTES = re.compile(
    rf"^{_ADVERBS}(?:(?P<verb>drives|bikes|cycles|walks|runs|carpools)|(?:takes|rides|catches)"
    r"\s+(?:the|a|his|her|their|my)\s+(?P<vehicle>bus|train|subway|tube|metro|tram|ferry|bike|"
    r"light rail|scooter|shuttle|car)|commutes\s+by\s+(?P<by>\w+))\s+to\s+"
    r"(?:work|the office|school|campus)\b"
    # "commutes to work by car", "gets to the office by train".
    # "commutes by car": to work, said or not.
    rf"|^{_ADVERBS}commutes\s+by\s+(?P<alone>car|bus|train|light rail|subway|tube|metro|tram|"
    r"ferry|bike|bicycle|scooter)\b"
    # "has been biking to work since spring": the way, told as what has been done lately.
    r"|^(?:has|have)\s+been\s+(?P<lately>biking|cycling|walking|driving|carpooling)\s+to\s+"
    r"(?:work|the office|school|campus)\b"
    r"|^(?:(?:usually|always|now|still|mostly|currently)\s+)*(?:commutes|gets|goes|travels)\s+to"
    r"\s+(?:work|the office|school|campus)\s+(?:by\s+(?P<mode>car|bus|train|light rail|subway|"
    r"tube|metro|tram|ferry|bike|bicycle|scooter|shuttle)|on\s+(?P<foot>foot))\b",
    _I,
)
_COMMUTE_MODES = {
    "biking": "bike",
    "cycling": "bike",
    "walking": "walk",
    "driving": "car",
    "carpooling": "car",
    "bikes": "bike",
    "cycles": "bike",
    "bicycle": "bike",
    "drives": "car",
    "carpools": "car",
    "walks": "walk",
    "foot": "walk",
}


def commute(predicate: str) -> list[Finding]:
    if _ONE_DAY.search(predicate) or (match := _COMMUTES.match(predicate)) is None:
        return []
    said = ("verb", "vehicle", "by", "mode", "foot", "lately", "alone")
    mode = next(match.group(group) for group in said if match.group(group)).lower()
    return [Finding("commute", _COMMUTE_MODES.get(mode, mode))]


# --- a life ended, where someone works from ------------------------------------------------------
#: "Max passed away", "the user's grandmother died": whatever held of them while they lived.
_DIED = re.compile(
    rf"^{_ADVERBS}(?:has\s+|had\s+)?(?:died|passed away|passed on|was put down|was put to sleep|"
    r"is dead|was killed)\b",
    _I,
)


def death(predicate: str) -> list[Finding]:
    return [Finding(ALIVE, DEAD)] if _DIED.match(predicate) else []


_DAYS_A_WEEK = r"(?P<days>one|two|three|four|five|1|2|3|4|5)\s+days?\s+a\s+week"
_OFFICE = r"(?:the|our|my|his|her|their)\s+office"
#: Where someone works from: home ("works remotely", "now works fully remote"), the office
#: ("is back in the office five days a week", "started going to the office full-time") or both
#: ("works from the office three days a week", "works hybrid").
_WORKS_REMOTE = re.compile(
    rf"^{_ADVERBS}(?:works?|is working|has been working|started working|went|is|now works)\s+"
    r"(?:(?:fully|mostly|entirely|completely|full-time)\s+)?(?:remotely|remote|from home)\b",
    _I,
)
_WORKS_HYBRID = re.compile(rf"^{_ADVERBS}(?:works?|is working|went|is)\s+(?:a\s+)?hybrid\b", _I)
_WORKS_IN_OFFICE = re.compile(
    rf"^{_ADVERBS}(?:(?:works?|is working|started working|has been working)\s+(?:from|in|at)|"
    r"(?:is|are)\s+back\s+(?:in|at|to)|(?:returned|went back|is going|goes|started going|"
    rf"started commuting|commutes)\s+(?:back\s+)?(?:in)?to)\s+{_OFFICE}\b(?P<rest>.*)$",
    _I,
)
#: One day's whereabouts, not where someone works: "is working from home today".
_ONE_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|this (?:week|morning|afternoon)|while|until)\b", _I
)


def workplace(predicate: str) -> list[Finding]:
    if _ONE_DAY.search(predicate):
        return []
    if _WORKS_REMOTE.match(predicate):
        return [Finding(WORKPLACE, "remote")]
    if _WORKS_HYBRID.match(predicate):
        return [Finding(WORKPLACE, "hybrid")]
    if (match := _WORKS_IN_OFFICE.match(predicate)) is not None:
        days = re.search(_DAYS_A_WEEK, match.group("rest"), _I)
        part_time = days is not None and days.group("days").lower() not in ("five", "5")
        return [Finding(WORKPLACE, "hybrid" if part_time else "office")]
    return []


_EXCLUSIVE = frozenset(
    {
        "employer",
        "role",
        "residence",
        "household",
        "relationship",
        "diet",
        "preference",
        ALIVE,
        WORKPLACE,
        "school",
        "commute",
    }
)

RULES = (
    employment,
    residence,
    household,
    home_tenure,
    diet,
    relationship,
    pets,
    health,
    condition,
    age,
    family,
    result,
    decision,
    tools,
    preference,
    death,
    workplace,
    school,
    commute,
    switched,
    activity,
)


#: A present-tense verb and what follows it ("flies with United"); verbs of being, saying,
#: wanting or feeling say nothing a later "now" replaces.
_PRESENT = re.compile(
    r"^(?P<now>(?:(?:currently|just|only)\s+)*now\s+)?(?P<verb>[a-z]+s)\s+(?P<rest>.+)$"
)
_FRAME_END = re.compile(r"[,;]|\b(?:because|since|after|when|while|so|but|and)\b", _I)
_NOT_FRAMES = word_set(
    "is has was does says thinks seems looks feels needs wants knows means gets goes likes "
    "loves hates prefers hopes plans tries asks tells"
)


def frames(predicate: str, *, now_only: bool = False) -> list[Finding]:
    """What the clause's verb says the subject does: ``frame:<verb>`` with what follows as the
    topic ("flies with United"). ``now_only``: only told "now" ("now flies with Delta"), as a
    newer memory's claim; an older memory's frames are read only against one (never to decide
    anything alone)."""
    match = _PRESENT.match(predicate)
    if match is None or match.group("verb").lower() in _NOT_FRAMES or unsettled(predicate):
        return []
    now = match.group("now") is not None
    if (now_only and not now) or _ANOTHER_ROLE.search(predicate):
        return []
    # The whole complement ("with Delta for work trips"), up to a reason or another clause.
    topic = words(_FRAME_END.split(match.group("rest"), maxsplit=1)[0])
    verb = match.group("verb").lower()
    return [Finding(f"{FRAME}:{verb}", " ".join(sorted(topic)), topic, now=now)] if topic else []


def unsettled(predicate: str) -> bool:
    """Whether the clause hedges, plans or wishes rather than states what holds."""
    return _UNSETTLED.search(predicate) is not None


def findings(predicate: str) -> list[Finding]:
    """Every attribute the predicate states (nothing when it is unsettled). Activities are
    only read when no other rule recognised the clause: "joined Stripe as an engineer" is a
    job, not an activity."""
    if unsettled(predicate):
        return []
    # "has recently gotten", "is now living": the adverb after the auxiliary goes, so every
    # rule reads the verb where it expects it.
    predicate = _AUX_ADVERB.sub(r"\1 ", predicate)
    found: list[Finding] = []
    for rule in RULES:
        if rule is activity and any(finding.attribute in _EXCLUSIVE for finding in found):
            break
        if rule is switched and any(finding.attribute != PLATFORM for finding in found):
            # A rule that read the value itself ("moved to Lisbon", a tool) decides; a platform
            # is read only of a project's thing, so the switch stays for anyone else.
            continue
        found.extend(rule(predicate))
    # Nothing else read: what holds now, told against what held ("now flies with Delta").
    return found or frames(predicate, now_only=True)
