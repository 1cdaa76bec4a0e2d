"""What the room's values are: the typed obligation kinds, checker outcomes and evidence records
(``models``), and the measured table of which kinds of refutation decide (``flagtable``, written by
``bench/reference_precision.py --write-table``)."""
