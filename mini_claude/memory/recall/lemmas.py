"""English words whose forms the index's stemmer cannot join: irregular verbs ("went" is "go") and
plurals ("children" is "child"), so a message and a memory that say one in two forms still meet.

Forms that are also words of their own are left out ("found", "left", "felt", "saw", "rose"), and
so is "won", which is also the start of "won't".
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


@functools.cache
def _table() -> dict[str, str]:
    table = {}
    for group in _GROUPS.split("|"):
        base, *forms = group.split()
        table.update(dict.fromkeys(forms, base))
    return table


def lemma(word: str) -> str:
    """`word` (casefolded) as its base form when it is an irregular one, else itself."""
    return _table().get(word, word)
