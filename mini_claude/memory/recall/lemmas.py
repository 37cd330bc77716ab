"""English words whose forms the index's stemmer cannot join: irregular verbs ("went" is "go"),
plurals ("children" is "child"), and everyday words that mean the same ("kid" is "child", "pic" is
"photo", "fave" is "favorite"), so a message and a memory that say one thing in two ways still meet.

Forms that are also words of their own are left out ("found", "left", "felt", "saw", "rose"), and
so is "won", which is also the start of "won't". The synonyms are a short hand-made list of common
English, each word with one meaning only ("present" is left out: a gift, or now?).
"""

from __future__ import annotations

import functools

# Each group: the base form, then the forms that stand for it.
_GROUPS = """
arise arose arisen|awake awoke awoken|bear borne|beat beaten|become became|begin began begun|
bend bent|bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought|
build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung|come came|
creep crept|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk|drive drove driven|
eat ate eaten|fall fallen|feed fed|fight fought|flee fled|fly flew flown|forbid forbade forbidden|
forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|give gave given|go went gone|
grow grew grown|hang hung|hear heard|hide hid hidden|hold held|keep kept|kneel knelt|know knew known|
lead led|leap leapt|learn learnt|lend lent|lose lost|make made|mean meant|meet met|pay paid|
ride rode ridden|ring rang rung|rise risen|run ran|say said|see seen|seek sought|sell sold|
send sent|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|sing sang sung|
sink sank sunk|sleep slept|slide slid|speak spoke spoken|spend spent|spin spun|spring sprang sprung|
stand stood|steal stole stolen|stick stuck|sting stung|strike struck|swear swore sworn|sweep swept|
swim swam swum|swing swung|take took taken|teach taught|tear tore torn|tell told|think thought|
throw threw thrown|understand understood|wake woke woken|wear wore worn|weave wove woven|weep wept|
write wrote written|
child children|man men|woman women|person people|mouse mice|foot feet|tooth teeth|goose geese
"""
# Each group: the word the others stand for, then words (or spellings) that mean the same.
_SYNONYMS = """
child kid kiddo|mother mom mum mommy mama|father dad daddy papa|brother bro|sister sis|
grandmother grandma granny nana|grandfather grandpa granddad|friend buddy pal|husband hubby|
photo picture pic photograph snapshot|favorite favourite fave fav|movie film|television tv|
car automobile|doctor physician|buy purchase|begin start|happy glad|job occupation|vacation holiday|
sofa couch|store shop|trash garbage rubbish|phone cellphone smartphone|dinner supper|bicycle bike|
dog puppy pup doggy|cat kitten kitty|information info|hobby pastime|nervous anxious|
scared afraid frightened|exhausted tired|thrilled excited|color colour|center centre|theater theatre|
gray grey|organize organise|business biz|want wanna|going gonna|college university uni|
professor prof|neighborhood neighbourhood|concert gig|exercise workout|lawyer attorney|
sick ill|fix repair|help assist|quit resign|wedding marriage|boss manager|coworker colleague|
january jan|february feb|august aug|september sept|october oct|november nov|december dec
"""


@functools.cache
def _table() -> dict[str, str]:
    table = {}
    for group in (_GROUPS + "|" + _SYNONYMS).split("|"):
        base, *forms = group.split()
        table.update(dict.fromkeys(forms, base))
    return table


def lemma(word: str) -> str:
    """`word` (casefolded) as its base form when it is an irregular one or a synonym (a plural in
    -s too: "kids" is "child"), else itself."""
    table = _table()
    found = table.get(word)
    if found is None and len(word) > 3 and word.endswith("s"):
        found = table.get(word[:-1])
    return word if found is None else found
