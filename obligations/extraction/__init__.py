"""Reading obligations out of the state tree, pure: EdgeUnits and their step text -> typed obligations.

``edgeunits``: the relations an EdgeUnit claims (``extract_obligations``); ``readings`` and
``conventions``: notation the text leaves open, and the readings a refutation must survive; claims the
formula reader does not read, each kind its own rule: ``remainders`` and ``divisibility`` (over
``wordclaims``), ``rootclaims`` (roots of the problem's equation), ``problemrewrite`` (the rewriting the
problem asks for)."""
