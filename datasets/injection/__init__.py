"""The parts of error injection into GSM8K solutions (``faithsieve.datasets.inject`` is the entry).

``tokens`` reads written arithmetic with character spans and evaluates it exactly through
``faithsieve.mathtext``; ``chains`` finds and checks written chains ``e0 = e1 = ... = en``;
``numbers`` writes values in a solution's own style and lists the numbers a text mentions;
``edits`` changes one equation and carries the changed value through the later steps;
``mutations`` defines each mutation, validates its variant and explains it.
"""
