"""Precedence-climbing parser from tokens to a bounded AST.

Grammar (both notations; LaTeX adds ``\\frac``, ``\\sqrt``, ``\\binom``, braces):

    chain   := expr (REL expr)*
    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary | <implicit> unary)*
    unary   := ("-" | "+") unary | power
    power   := postfix ("^" unary)?            -- right associative
    postfix := atom ("!" | "%")*
    atom    := NUM | VAR ["_" sub] | CONST | "(" expr ")" | "{" expr "}"
             | "|" expr "|" | floor/ceil brackets | FUNC args

Nothing is evaluated here. Depth and size are bounded: input beyond the bounds
is a ``ParseError``, never a deep recursion.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.core.errors import ParseError
from faithsieve.mathtext import tokens as tk
from faithsieve.mathtext.ast import (
    BinOp,
    Calc,
    Call,
    Chain,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    substitute,
    variables,
)
from faithsieve.mathtext.tokens import Token

MAX_TOKENS = 400
MAX_FORMULA_NESTING = 60
"""Deepest nesting of one formula's groups, operands and calls the parser reads."""
MAX_NUMBER_CHARS = 200

_ATOM_START = (tk.NUM, tk.VAR, tk.CONST, tk.LP, tk.LB, tk.FUNC, tk.LSET, tk.LEVAL)
FUNCTION_LETTERS = frozenset("fghFGHPQpq")
"""Letters read as function names when directly followed by a parenthesis."""


def parse_number(text: str, start: int = -1, end: int = -1) -> Num:
    """The literal a NUM token writes (``start``/``end``: its character span)."""
    if " " in text and "/" in text:  # a mixed number "2 1/2" from the lexer
        whole, frac = text.split(" ", 1)
        p, q = frac.split("/", 1)
        return Num(int(whole) + Fraction(int(p), int(q)), text, 0, start, end)
    if text.endswith(")") and "(" in text:  # a repeating decimal "0.(3)", "1.2(45)" from the lexer
        return _repeating(text, start, end)
    raw = text.replace(",", "")
    if len(raw) > MAX_NUMBER_CHARS:
        raise ParseError("numeric literal too long")
    if "_" in raw:  # "1202_7": a numeral in the base written under it (the lexer checked its digits)
        return _in_base(raw, start, end)
    if "." in raw:
        whole, frac = raw.split(".", 1)
        value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac), 10 ** len(frac))
        return Num(value, text.replace(",", ""), len(frac), start, end)
    return Num(Fraction(int(raw)), raw, 0, start, end)


def _in_base(raw: str, start: int, end: int) -> Num:
    """``d..d.d..d_b``: the value of the digits in base ``b`` (``1202_7`` is 443, ``0.1_2`` is 1/2)."""
    digits, base_text = raw.split("_", 1)
    base = int(base_text)
    whole, _, frac = digits.partition(".")
    value = Fraction(int(whole or "0", base))
    if frac:
        value += Fraction(int(frac, base), base ** len(frac))
    return Num(value, raw, len(frac) if base == 10 else 0, start, end)


def _repeating(text: str, start: int, end: int) -> Num:
    """``a.b(c)``: the decimal ``a.b`` followed by the period ``c`` repeated without end, exactly
    ``a.b + c / (10^len(b) · (10^len(c) - 1))`` (``0.(3)`` is 1/3)."""
    if len(text) > MAX_NUMBER_CHARS:
        raise ParseError("numeric literal too long")
    head, period = text[:-1].split("(", 1)
    whole, frac = head.split(".", 1)
    if not period.isdigit() or not (whole or "0").isdigit() or (frac and not frac.isdigit()):
        raise ParseError("bad repeating decimal")
    value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    value += Fraction(int(period), 10 ** len(frac) * (10 ** len(period) - 1))
    return Num(value, text, 0, start, end)


NUMBER_THEORY = {"varphi": "totient", "phi": "totient", "tau": "numdivisors", "sigma": "divsigma"}
"""Greek letters that number theory writes for its functions, applied to a closed argument:
Euler's totient, the number and the sum of divisors (``\\varphi(12)``, ``\\tau(12)``)."""
MULTI_ARG_FUNCS = frozenset({"gcd", "lcm"})
"""Functions of several comma-separated arguments (the lexer keeps their commas as ``COMMA``)."""
MAX_SUM_TERMS = 60
"""A finite sum or product with numeric bounds is expanded term by term up to this many terms."""


class _Parser:
    def __init__(self, toks: list[Token], latex: bool, imaginary: bool = False) -> None:
        if len(toks) > MAX_TOKENS:
            raise ParseError("formula too long")
        self.t = toks
        self.i = 0
        self.latex = latex
        self.imaginary = imaginary
        self.depth = 0

    # -- helpers -------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ParseError("unexpected end of formula")
        self.i += 1
        return tok

    def expect(self, kind: str) -> Token:
        tok = self.take()
        if tok.kind != kind:
            raise ParseError(f"expected {kind}, found {tok.value!r}")
        return tok

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_FORMULA_NESTING:
            raise ParseError("formula nested too deeply")

    # -- grammar -------------------------------------------------------
    def chain(self) -> tuple[Chain, list[tuple[int, int]]]:
        spans = []
        s0 = self.i
        exprs = [self.member()]
        spans.append((self.t[s0].start, self.t[self.i - 1].end))
        rels: list[str] = []
        while (tok := self.peek()) is not None and tok.kind == tk.REL:
            self.take()
            nxt = self.peek()
            if nxt is not None and nxt.kind == tk.OP and nxt.value in ("+", "*", "/"):
                raise ParseError(f"operator {nxt.value!r} right after a relation")
            rels.append(tok.value)
            s0 = self.i
            exprs.append(self.member())
            spans.append((self.t[s0].start, self.t[self.i - 1].end))
        if self.peek() is not None:
            raise ParseError(f"unexpected {self.peek().value!r}")  # type: ignore[union-attr]
        return Chain(tuple(exprs), tuple(rels)), spans

    def member(self) -> Expr:
        """A member of the chain: an expression, or the ratio ``a : b`` of two (``a / b``)."""
        e = self.expr()
        if (tok := self.peek()) is not None and tok.kind == tk.EVALBAR:
            e = self._bar_scripts(e)  # F \Big|_{x=a}: the bar acts on the member before it
        if (tok := self.peek()) is not None and tok.kind == tk.RATIO:
            self.take()
            e = BinOp("/", e, self.expr())
        return e

    def expr(self) -> Expr:
        self.enter()
        left = self.term()
        while (tok := self.peek()) is not None and tok.kind == tk.OP and tok.value in "+-":
            self.take()
            left = BinOp(tok.value, left, self.term())
        self.depth -= 1
        return left

    def _implicit_ok(self, prev_end: Token, nxt: Token) -> bool:
        if nxt.kind not in _ATOM_START:
            return False
        if nxt.kind == tk.NUM and prev_end.kind in (tk.NUM, tk.VAR, tk.CONST, tk.RB, tk.RP, tk.PCT):
            return False  # "2 3", "x 2": not a product
        if not self.latex:
            if nxt.space_before:
                return False
            return nxt.kind in (tk.VAR, tk.LP, tk.CONST) and prev_end.kind in (tk.NUM, tk.VAR, tk.RP, tk.CONST)
        return True

    def term(self) -> Expr:
        left = self.unary()
        while (tok := self.peek()) is not None:
            if tok.kind == tk.OP and tok.value in ("*", "/", "mod"):
                self.take()
                left = BinOp(tok.value, left, self.unary())
            elif (self.latex and tok.kind == tk.FUNC and tok.value == "frac" and self.t[self.i - 1].kind == tk.NUM
                  and _whole(left) and self._simple_frac_ahead()):
                # 2\frac{6}{7}, 2\tfrac12 are the mixed numbers 2 6/7, 2 1/2 (and -2\tfrac12 is -(2 1/2))
                self.take()
                frac = self._func("frac")
                left = _mixed(left, frac)
            elif self._implicit_ok(self.t[self.i - 1], tok):
                left = BinOp("*", left, self.power())
            else:
                break
        return left

    def _simple_frac_ahead(self) -> bool:
        """``\\frac`` at ``self.i`` has two whole-number arguments of a proper fraction, braced or not
        (``\\frac{3}{4}``, ``\\tfrac12``, ``\\frac3{4}``): the fraction of a mixed number."""
        t = self.t
        j = self.i + 1
        digits: list[str] = []
        while j < len(t) and len(digits) < 2:
            if t[j].kind == tk.LB and j + 2 < len(t) and t[j + 1].kind == tk.NUM and t[j + 2].kind == tk.RB:
                digits.append(t[j + 1].value)
                j += 3
            elif t[j].kind == tk.NUM and t[j].value.isdigit() and not digits and len(t[j].value) == 2:
                digits.extend(t[j].value)  # \frac12: one digit each
                j += 1
            elif t[j].kind == tk.NUM and t[j].value.isdigit() and len(t[j].value) == 1:
                digits.append(t[j].value)
                j += 1
            else:
                return False
        return len(digits) == 2 and all(d.isdigit() for d in digits) and int(digits[0]) < int(digits[1])

    def unary(self) -> Expr:
        tok = self.peek()
        if tok is not None and tok.kind == tk.OP and tok.value in "+-":
            self.take()
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return Neg(operand) if tok.value == "-" else operand
        return self.power()

    def power(self) -> Expr:
        base = self.postfix()
        tok = self.peek()
        if tok is not None and tok.kind == tk.POW:
            self.take()
            self.enter()
            nxt = self.peek()
            if self.latex and nxt is not None and nxt.kind == tk.NUM and len(nxt.value) > 1 and nxt.value.isdigit():
                # x^23 in LaTeX means x^2 * 3 ... but models mean x^{23}; refuse to guess
                raise ParseError("ambiguous LaTeX exponent")
            if self.latex and nxt is not None and nxt.kind not in (tk.LB, tk.OP):
                exponent = self.atom()
            else:
                exponent = self.unary()
            self.depth -= 1
            return Pow(base, exponent)
        return base

    def postfix(self) -> Expr:
        e = self.atom()
        while (tok := self.peek()) is not None and tok.kind in (tk.BANG, tk.PCT, tk.DEG, tk.PRIME):
            self.take()
            if tok.kind == tk.PRIME:
                e = Calc("diff", e, _sole_variable(e))  # (x^5)': the derivative in the bracket's one letter
                continue
            e = Call({tk.BANG: "factorial", tk.PCT: "percent", tk.DEG: "deg"}[tok.kind], (e,))
        return e

    def group(self) -> Expr:
        """A LaTeX argument: {expr} or a single token."""
        tok = self.peek()
        if tok is not None and tok.kind == tk.LB:
            self.take()
            e = self.expr()
            self.expect(tk.RB)
            return e
        if tok is not None and tok.kind == tk.NUM and self.latex and tok.value.isdigit() and len(tok.value) > 1:
            # \frac12 means 1/2: split the digits
            self.take()
            first = parse_number(tok.value[0], tok.start, tok.start + 1)
            rest = Token(tk.NUM, tok.value[1:], tok.start + 1, tok.end, False)
            self.t.insert(self.i, rest)
            return first
        return self.atom()

    def atom(self) -> Expr:
        self.enter()
        try:
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self) -> Expr:
        tok = self.take()
        k = tok.kind
        if k == tk.NUM:
            return parse_number(tok.value, tok.start, tok.end)
        if k == tk.VAR and tok.value == "i" and self.imaginary and ((s := self.peek()) is None or s.kind != tk.SUB):
            # the imaginary unit, when the text works with complex numbers (at the end of the formula
            # too: "= 534 + 240i"); ``i_1`` is a name
            return Const("i")
        if k == tk.VAR:
            return self._variable(tok.value)
        if k == tk.CONST:
            return Const(tok.value)
        if k == tk.LEVAL:
            return self._evaluation_bar()
        if k == tk.LP:
            e = self.expr()
            close = self.expect(tk.RP)
            if tok.value == "[" and close.value == "]" and self._scripts_ahead():
                return self._bracket_difference(e)
            if tok.value in ("floor", "ceil"):
                if close.value != tok.value:
                    raise ParseError("mismatched floor/ceil brackets")
                return Call(tok.value, (e,))
            if close.value in ("floor", "ceil"):
                raise ParseError("mismatched brackets")
            return e
        if k == tk.LB:
            e = self.expr()
            self.expect(tk.RB)
            return e
        if k == tk.LSET:
            # \{x\}: the fractional part of x (a set of one number is never equal to a number)
            e = self.expr()
            self.expect(tk.RSET)
            return Call("frac", (e,))
        if k == tk.BAR:
            e = self.expr()
            self.expect(tk.BAR)
            return Call("abs", (e,))
        if k == tk.FUNC:
            return self._func(tok.value)
        raise ParseError(f"unexpected {tok.value!r}")

    def _glued_paren(self) -> bool:
        nxt = self.peek()
        return nxt is not None and nxt.kind == tk.LP and not nxt.space_before and nxt.value in "(["

    def _variable(self, name: str) -> Expr:
        """A variable, ``x_1``, or an unknown function applied (``f(x)``, ``f^{-1}(3)``); the functions
        of number theory (``\\varphi(12)``, ``v_2(48)``) applied."""
        if (s := self.peek()) is not None and s.kind == tk.SUB:
            self.take()
            name += "_" + self._subscript_text()
        if (name in NUMBER_THEORY or name[:2] == "v_" and _padic(name)) and self._glued_paren():
            self.take()
            arg = self.expr()
            self.expect(tk.RP)
            if variables(arg):
                return Call("fn:" + name, (arg,))  # a function of a letter: which one is not known
            if name in NUMBER_THEORY:
                return Call(NUMBER_THEORY[name], (arg,))
            base = name[2:]
            return Call("padicval", (parse_number(base) if base.isdigit() else Var(base), arg))
        if self._function_name(name):
            nxt = self.peek()
            if nxt is not None and nxt.kind == tk.POW:
                # f^{-1}(3), f^2(x): an iterate or inverse applied
                j = self._group_end(self.i + 1)
                after = self.t[j] if 0 <= j < len(self.t) else None
                if after is not None and after.kind == tk.LP and not after.space_before and after.value in "([":
                    name += "^" + "".join(t.value for t in self.t[self.i + 1 : j])
                    self.i = j
            nxt = self.peek()
            if nxt is not None and nxt.kind == tk.LP and not nxt.space_before and nxt.value in "([":
                # f(x), S(0), p'(1): an unknown function applied, never a product
                self.take()
                args = [self.expr()]
                self.expect(tk.RP)
                return Call("fn:" + name, tuple(args))
        return Var(name)

    def _function_name(self, name: str) -> bool:
        base = name.split("_")[0]
        return base.endswith("'") or base in FUNCTION_LETTERS or base.isupper() or not self.latex

    def _group_end(self, j: int) -> int:
        """Index after the exponent group starting at token j (a braced group or one token), or -1."""
        if j >= len(self.t):
            return -1
        if self.t[j].kind != tk.LB:
            return j + 1
        depth = 0
        for k in range(j, min(len(self.t), j + 40)):
            if self.t[k].kind == tk.LB:
                depth += 1
            elif self.t[k].kind == tk.RB:
                depth -= 1
                if depth == 0:
                    return k + 1
        return -1

    def _subscript_text(self) -> str:
        tok = self.take()
        if tok.kind == tk.LB:
            parts = []
            while (t := self.take()).kind != tk.RB:
                if t.kind not in (tk.NUM, tk.VAR):
                    raise ParseError("complex subscript")
                parts.append(t.value)
            return "".join(parts)
        if tok.kind in (tk.NUM, tk.VAR):
            return tok.value[0] if tok.kind == tk.NUM else tok.value
        raise ParseError("bad subscript")

    def _func(self, fn: str) -> Expr:
        if fn in ("frac", "int", "lim") and (calc := self._calculus(fn)) is not None:
            return calc
        if fn == "frac":
            num = self.group()
            den = self.group()
            return BinOp("/", num, den)
        if fn == "binom":
            return Call("binom", (self.group(), self.group()))
        if not self.latex and fn in ("floor", "ceil", "abs"):
            self.expect(tk.LP)
            e = self.expr()
            self.expect(tk.RP)
            return Call(fn, (e,))
        if fn == "sqrt":
            tok = self.peek()
            if tok is not None and tok.kind == tk.LP and tok.value == "[":
                self.take()
                index = self.expr()
                self.expect(tk.RP)
                return Call("root", (self.group(), index))
            if self.latex:
                return Call("sqrt", (self.group(),))
            return Call("sqrt", (self.postfix(),))
        if fn in ("sum", "prod"):
            return self._big_operator(fn)
        if fn in MULTI_ARG_FUNCS:
            self.expect(tk.LP)
            args = [self.expr()]
            while (tok := self.peek()) is not None and tok.kind == tk.COMMA:
                self.take()
                args.append(self.expr())
            self.expect(tk.RP)
            if len(args) < 2:
                raise ParseError(f"{fn} of one argument")
            return Call(fn, tuple(args))
        # opaque functions: sin, log, ...; an optional subscript base is kept in the name
        name = fn
        if (s := self.peek()) is not None and s.kind == tk.SUB:
            self.take()
            name += "_" + self._subscript_text()
        if (tok := self.peek()) is not None and tok.kind == tk.LP and tok.value in "([":
            # \cos(\pi/3)^2: a parenthesised argument is the whole argument, and a power after it
            # applies to the value, (cos(π/3))^2 (``power`` reads it); \sin x^2 stays sin(x^2)
            return Call(name, (self.atom(),))
        return Call(name, (self._monomial(),))

    # -- calculus values (``Calc``) ------------------------------------
    def _calculus(self, fn: str) -> Expr | None:
        """A derivative (``\\frac{d}{dx}``), an integral or a limit at ``self.i``; None for a plain fraction."""
        if fn == "int":
            return self._integral()
        if fn == "lim":
            return self._limit()
        order = self._leibniz() if self.latex else None
        if order is None:
            return None
        var, n, after, name = order
        if name:
            # dy/dx: the derivative of y as a function of x, the call y'(x); written out where the proof
            # defined y in x (``obligations.procedures.calculus.with_definitions``), else undecided
            self.i = after
            return Call(f"fn:{name}'", (Var(var),))
        return self._derivative(var, n, after)

    def _leibniz(self) -> tuple[str, int, int, str] | None:
        """``\\frac{d}{dx}`` or ``\\frac{d^2}{dx^2}`` at ``self.i`` (after ``\\frac``): the variable, the order,
        the index after it and ``""``; for ``\\frac{dy}{dx}`` (the derivative of a name) the variable, 0, the
        index after it and the name. None when the fraction is not a derivative; never the quotient of two
        products (another ``\\frac{d..}{d..}`` is a ``ParseError``)."""
        t, j = self.t, self.i
        if j + 1 >= len(t) or t[j + 1].value != "d" or t[j + 1].kind != tk.VAR:
            return None  # the common case, a plain fraction, decided at once
        kinds = [(x.kind, x.value) for x in t[j : j + 12]]
        if (kinds[:3] == [(tk.LB, "{"), (tk.VAR, "d"), (tk.RB, "}")] and kinds[3:5] == [(tk.LB, "{"), (tk.VAR, "d")]
                and len(kinds) > 6 and kinds[5][0] == tk.VAR and kinds[6][0] == tk.RB):
            return kinds[5][1], 1, j + 7, ""
        if (kinds[:6] == [(tk.LB, "{"), (tk.VAR, "d"), (tk.POW, "^"), (tk.NUM, "2"), (tk.RB, "}"), (tk.LB, "{")]
                and len(kinds) > 10 and kinds[6] == (tk.VAR, "d") and kinds[7][0] == tk.VAR
                and kinds[8:11] == [(tk.POW, "^"), (tk.NUM, "2"), (tk.RB, "}")]):
            return kinds[7][1], 2, j + 11, ""
        if kinds[:2] == [(tk.LB, "{"), (tk.VAR, "d")] and len(kinds) > 3 and kinds[2][0] == tk.VAR and (
                kinds[3][0] == tk.RB and kinds[4:6] == [(tk.LB, "{"), (tk.VAR, "d")]):
            if len(kinds) > 7 and kinds[6][0] == tk.VAR and kinds[7][0] == tk.RB and len(kinds[2][1]) == 1 and len(
                    kinds[6][1]) == 1 and kinds[2][1] != kinds[6][1]:
                return kinds[6][1], 0, j + 8, kinds[2][1]
            raise ParseError("Leibniz derivative of a name")
        if kinds[:4] == [(tk.LB, "{"), (tk.VAR, "d"), (tk.POW, "^"), (tk.NUM, "2")]:
            if (len(kinds) == 12 and kinds[4][0] == tk.VAR and len(kinds[4][1]) == 1 and kinds[5] == (tk.RB, "}")
                    and kinds[6:8] == [(tk.LB, "{"), (tk.VAR, "d")] and kinds[8][0] == tk.VAR and len(kinds[8][1]) == 1
                    and kinds[9:12] == [(tk.POW, "^"), (tk.NUM, "2"), (tk.RB, "}")] and kinds[4][1] != kinds[8][1]):
                return kinds[8][1], 0, j + 12, kinds[4][1] + "'"  # d^2y/dx^2: y''(x)
            raise ParseError("Leibniz second derivative")
        return None

    def _derivative(self, var: str, order: int, after: int) -> Expr:
        """``\\frac{d}{dx} body``: a bracket after the operator is its argument, else a product-level term
        (``\\frac{d}{dx} x^3``, ``\\frac{d}{dx}\\sin x``)."""
        self.i = after
        nxt = self.peek()
        body = self.power() if nxt is not None and nxt.kind == tk.LP else self.term()
        for _ in range(order):
            body = Calc("diff", body, var)
        return body

    def _integral(self) -> Expr:
        """``\\int_a^b body\\,dx``: the definite integral; the body runs to the differential ``d x`` outside
        brackets. Without scripts (``\\int 2x\\,dx``) it is the indefinite integral (``args == ()``); one
        bound alone, or no differential, is a ``ParseError``."""
        bounds: tuple[Expr, ...] = ()
        if (s := self.peek()) is not None and s.kind in (tk.SUB, tk.POW):
            self.expect(tk.SUB)
            lo = self._bound()
            self.expect(tk.POW)
            bounds = (lo, self._bound())
        depth, j = 0, self.i
        t = self.t
        while j + 1 < len(t):
            k = t[j].kind
            if k in (tk.LP, tk.LB, tk.LSET):
                depth += 1
            elif k in (tk.RP, tk.RB, tk.RSET):
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and (k == tk.REL or (k == tk.VAR and t[j].value == "d" and t[j + 1].kind == tk.VAR
                                               and len(t[j + 1].value) == 1 and j > self.i)):
                break
            j += 1
        else:
            raise ParseError("integral without a differential")
        if not (t[j].kind == tk.VAR and t[j].value == "d" and j + 1 < len(t) and t[j + 1].kind == tk.VAR):
            raise ParseError("integral without a differential")
        var = t[j + 1].value
        body = self._sub_expr(j)
        self.i = j + 2
        return Calc("int", body, var, bounds)

    def _bound(self) -> Expr:
        """A bound of an integral: a group, ``\\infty`` or ``-\\infty`` (as the call ``infty()``)."""
        tok = self.peek()
        if tok is not None and tok.kind == tk.INF:
            self.take()
            return Call("infty", ())
        a, b = self.peek(1), self.peek(2)
        if tok is not None and tok.kind == tk.LB and a is not None and b is not None:
            if a.kind == tk.INF and b.kind == tk.RB:
                self.i += 3
                return Call("infty", ())
            if (a.kind == tk.OP and a.value in "+-" and b.kind == tk.INF
                    and (c := self.peek(3)) is not None and c.kind == tk.RB):
                self.i += 4
                return Neg(Call("infty", ())) if a.value == "-" else Call("infty", ())
        return self.group()

    def _sub_expr(self, stop: int) -> Expr:
        """The tokens from ``self.i`` to ``stop`` parsed alone as one expression (at this parser's depth)."""
        if stop <= self.i:
            raise ParseError("empty calculus body")
        sub = _Parser(self.t[self.i : stop], self.latex, self.imaginary)
        sub.depth = self.depth
        e = sub.expr()
        if sub.peek() is not None:
            raise ParseError("unreadable calculus body")
        return e

    def _limit(self) -> Expr:
        """``\\lim_{x \\to a} body``, ``a`` a number, an expression, ``\\infty`` / ``-\\infty`` or one side
        (``0^+``, ``0^{-}``); the body is a bracket or a product-level term."""
        self.expect(tk.SUB)
        self.expect(tk.LB)
        var = self.expect(tk.VAR).value
        self.expect(tk.TO)
        depth, j, t = 0, self.i, self.t
        while j < len(t):
            if t[j].kind == tk.LB:
                depth += 1
            elif t[j].kind == tk.RB:
                if depth == 0:
                    break
                depth -= 1
            j += 1
        else:
            raise ParseError("unclosed limit subscript")
        point_toks = t[self.i : j]
        side = ""
        tail = [(x.kind, x.value) for x in point_toks[-4:]]
        if tail[-2:] in ([(tk.POW, "^"), (tk.OP, "+")], [(tk.POW, "^"), (tk.OP, "-")]):
            side, point_toks = tail[-1][1], point_toks[:-2]
        elif tail[-4:] in ([(tk.POW, "^"), (tk.LB, "{"), (tk.OP, "+"), (tk.RB, "}")],
                           [(tk.POW, "^"), (tk.LB, "{"), (tk.OP, "-"), (tk.RB, "}")]):
            side, point_toks = tail[-2][1], point_toks[:-4]
        kinds = [x.kind for x in point_toks]
        point: Expr
        if kinds == [tk.INF] or kinds == [tk.OP, tk.INF] and point_toks[0].value == "+":
            point = Call("infty", ())
        elif kinds == [tk.OP, tk.INF] and point_toks[0].value == "-":
            point = Neg(Call("infty", ()))
        else:
            stop = self.i + len(point_toks)
            point = self._sub_expr(stop)
            if variables(point) & {var}:
                raise ParseError("limit point in its own variable")
        self.i = j + 1
        nxt = self.peek()
        body = self.power() if nxt is not None and nxt.kind == tk.LP else self.term()
        return Calc("lim", body, var, (point,), side)

    def _evaluation_bar(self) -> Expr:
        """``\\left. F \\right|_{x=a}``: F with ``x`` replaced by ``a`` (a derivative there is its value at ``a``)."""
        e = self.expr()
        return self._bar_scripts(e)

    def _bar_scripts(self, e: Expr) -> Expr:
        """An evaluation bar and its scripts after ``e``: ``|_{x=a}`` is ``e`` with ``x`` replaced by ``a``;
        ``|_a^b`` is ``e(b) - e(a)`` in ``e``'s one letter."""
        self.expect(tk.EVALBAR)
        self.expect(tk.SUB)
        a, b = self.peek(1), self.peek(2)
        if (t := self.peek()) is not None and t.kind == tk.LB and a is not None and a.kind == tk.VAR and (
                b is not None and b.kind == tk.REL):
            self.expect(tk.LB)
            var = self.expect(tk.VAR).value
            if self.expect(tk.REL).value != "=":
                raise ParseError("evaluation bar")
            point = self.expr()
            self.expect(tk.RB)
            return substitute(e, {var: point})
        return self._bracket_difference(e, after_sub=True)

    def _scripts_ahead(self) -> bool:
        """``_a^b`` follows: ``[F(x)]_a^b``, the difference of an antiderivative's values."""
        a, b = self.peek(), self.peek(1)
        if a is None or a.kind != tk.SUB or b is None:
            return False
        j = self._group_end(self.i + 1)
        c = self.t[j] if 0 <= j < len(self.t) else None
        return c is not None and c.kind == tk.POW

    def _bracket_difference(self, e: Expr, after_sub: bool = False) -> Expr:
        """``\\left[x^3\\right]_0^2``: ``F(2) - F(0)`` in the bracket's one letter."""
        var = _sole_variable(e)
        if not after_sub:
            self.expect(tk.SUB)
        lo = self.group()
        self.expect(tk.POW)
        hi = self.group()
        return BinOp("-", substitute(e, {var: hi}), substitute(e, {var: lo}))

    def _monomial(self) -> Expr:
        """The argument of a function written without parentheses: a power, times the letters and
        constants glued to it (``\\sin 4\\pi`` is sin(4π), ``\\cos 2x`` is cos(2x); ``\\sin x \\cos x``
        is a product of two functions)."""
        arg = self.power()
        while ((tok := self.peek()) is not None and tok.kind in (tk.VAR, tk.CONST)
               and (self.latex or not tok.space_before)):
            arg = BinOp("*", arg, self.power())
        return arg

    def _big_operator(self, fn: str) -> Expr:
        """``\\sum_{k=a}^{b} body`` / ``\\prod``: with whole-number bounds (at most ``MAX_SUM_TERMS``
        terms) the sum or product written out, each term the body with ``k`` replaced by its value;
        the body is a product-level term (``\\sum_{k=1}^{4} k^2 + 1`` adds 1 to the sum). Other bounds
        are a ``ParseError``: the member is not read."""
        self.expect(tk.SUB)
        self.expect(tk.LB)
        index = self.expect(tk.VAR).value
        rel = self.expect(tk.REL)
        if rel.value != "=":
            raise ParseError("sum bound")
        lo = self.expr()
        self.expect(tk.RB)
        self.expect(tk.POW)
        hi = self.group()
        imaginary, self.imaginary = self.imaginary, self.imaginary and index != "i"
        try:
            body = self.term()  # the index i of \\sum_{i=1} is the index, not the imaginary unit
        finally:
            self.imaginary = imaginary
        bounds = [b.value for b in (lo, hi) if isinstance(b, Num) and b.value.denominator == 1]
        if len(bounds) != 2 or any(n.startswith(index + "_") or n.endswith("_" + index) for n in variables(body)):
            raise ParseError("symbolic sum")
        a, b = int(bounds[0]), int(bounds[1])
        if b - a + 1 > MAX_SUM_TERMS:
            raise ParseError("sum too long")
        if b < a:
            return Num(Fraction(0 if fn == "sum" else 1), "0" if fn == "sum" else "1", 0)
        terms = [substitute(body, {index: Num(Fraction(k), str(k), 0)}) for k in range(a, b + 1)]
        out = terms[0]
        for t in terms[1:]:
            out = BinOp("+" if fn == "sum" else "*", out, t)
        return out


def _sole_variable(e: Expr) -> str:
    """The one letter of ``e`` (the variable a prime or an evaluation bracket acts in), else a ``ParseError``."""
    names = variables(e) - {"e"}
    if len(names) != 1:
        raise ParseError("no single variable to differentiate in")
    return next(iter(names))


def _mixed(whole: Expr, frac: Expr) -> Expr:
    """The mixed number ``whole frac`` as one literal (``2\\tfrac12`` is 5/2, written ``2 1/2``), so that
    it is a number, never a sum that a chain might continue; ``-2\\tfrac12`` is its negation."""
    sign = isinstance(whole, Neg)
    w = whole.operand if isinstance(whole, Neg) else whole
    p, q = (frac.left, frac.right) if isinstance(frac, BinOp) else (None, None)
    if not (isinstance(w, Num) and isinstance(p, Num) and isinstance(q, Num) and q.value):
        raise ParseError("mixed number")
    num = Num(w.value + p.value / q.value, f"{w.text} {p.text}/{q.text}", 0, w.start, max(w.end, q.end))
    return Neg(num) if sign else num


def _whole(e: Expr) -> bool:
    """A whole number as written, or its negation: the integer part of a mixed number."""
    if isinstance(e, Neg):
        e = e.operand
    return isinstance(e, Num) and e.decimals == 0 and e.value.denominator == 1 and " " not in e.text


def _padic(name: str) -> bool:
    """``v_2``, ``v_p``: the p-adic valuation."""
    return name.startswith("v_") and (name[2:].isdigit() or (len(name) == 3 and name[2].isalpha()))


def parse_tokens(toks: list[Token], latex: bool, imaginary: bool = False) -> tuple[Chain, list[tuple[int, int]]]:
    """Parse one formula's tokens into a Chain plus the character span of each member."""
    if not toks:
        raise ParseError("empty formula")
    p = _Parser(list(toks), latex, imaginary)
    return p.chain()

