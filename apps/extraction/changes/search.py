"""Which memories a claim could be about: the words to look for in the subject's keyword
postings (the change detector's candidates, ``apps.memory.services.changes``)."""

from __future__ import annotations

from apps.extraction.changes.claims import Claim
from apps.extraction.changes.kinds import KIND_NAMES, tool_kind
from apps.extraction.changes.patterns import (
    ALIVE,
    CHOICE,
    FRAME,
    HELD,
    KIND_MEMBERS,
    OCCUPATIONS,
    PHRASE,
    SWITCHED,
    WORKPLACE,
)

#: Words that find the memories a claim of each family could be about (keyword search).
_FAMILY_WORDS = {
    "employer": "job jobs work works working worked employer employed company position role "
    "promoted hired quit laid fired retired unemployed career student studies graduated",
    "role": "job work works working position role promoted title career head lead director "
    "chief vp president manager ceo cto cfo coo " + OCCUPATIONS.replace("|", " "),
    "residence": "live lives living lived moved move relocated based settled address",
    "household": "live lives living alone roommate roommates together",
    "home": "rents renting rented rent owns bought house home homeowner apartment flat condo "
    "studio townhouse",
    "diet": "vegetarian vegan pescatarian keto paleo diet meat eat eats",
    "relationship": "married engaged divorced single dating girlfriend boyfriend wedding "
    "husband wife partner broke knot",
    "pets": "pet pets dog dogs puppy puppies pup pups doggies cat cats kitten turtle turtles "
    "fish bird rabbit hamster horse",
    "health": "injury injured hurt sprained broke recovered recovering healed pain rehab",
    "result": "test exam interview audition failed passed",
    "decision": "decided decision agreed chose",
    "activity": "stopped quit started joined every weekly",
    "preference": "likes loves prefers enjoys hates dislikes",
    CHOICE: "prefers preferred",
    "condition": "allergic allergy diagnosed",
    "tool": "uses using switched migrated",
    ALIVE: "named called died passed",
    WORKPLACE: "remote remotely home office hybrid",
    "school": "school attends student elementary preschool kindergarten college university",
    "commute": "work office drives bikes walks takes rides commutes bus train",
    "key": "",
    HELD: "",
    SWITCHED: "switched moved transferred upgraded",
    PHRASE: "",
    FRAME: "",
}


#: Keys a statement gives without naming them: "is 30 years old" states the age.
_KEY_WORDS = {
    "age": "old years turned",
    "platform": "runs written built hosted powered",
    "children": "child kid kids baby babies son daughter sons daughters",
    "grade": "grade grader",
    "salary": "salary paid earns makes raise",
}


def search_words(claim: Claim) -> str:
    """Words a memory about the same attribute likely holds (for a keyword search)."""
    extra = [claim.value, claim.replaced, " ".join(sorted(claim.topic))]
    if claim.family == ALIVE:
        extra.append(claim.entity.replace("'s", ""))
    if claim.family == "activity":
        # "quit smoking" finds "is a smoker", "stopped swimming" "is a swimmer".
        extra += [f"{word}{double}er" for word in claim.topic for double in ("", word[-1])]
        extra += [KIND_MEMBERS.get(word, "") for word in claim.topic]
    if claim.family == "tool" and (kind := tool_kind(claim.value)) is not None:
        # "switched to Firefox" finds "browses with Chrome": the other tools of its kind.
        extra.append(KIND_NAMES[kind])
    if claim.family in ("pets", "health", "tool", "key", SWITCHED, FRAME):
        qualifier = claim.attribute.split(":", 1)[-1]
        extra += [qualifier, _KEY_WORDS.get(qualifier, "")]
    return " ".join([_FAMILY_WORDS[claim.family], *extra]).strip()
