"""The kernel function's source, rewritten so that ``for i in metile.tile_range(...)``
becomes a traced loop, and ``for i in range(...)`` one too when a bound is a traced value
(over Python numbers it runs while tracing, as before); so that the builtins ``min(a, b,
...)`` and ``max(...)`` take traced values as Triton's do (``loops.builtin_extreme``); and so
that ``if``/``elif``/``else``, ``x if c else y``, ``and``/``or``/``not`` and an early
``return`` work on traced values as in Triton (branches.py), and ``while`` loops on a traced
condition become Tile IR while loops (loops.run_while).

Each such loop body turns into a nested function of (induction variable, every name the
body assigns); after it, one call runs the body through ``loops.run_tile_loop`` and assigns
the names back. At run time, a name that is bound before the loop is loop-carried; the
others are body-local. An ``if`` becomes the same: one nested function per branch, of every
name either branch assigns, and one call of ``branches.run_if``, which runs the branch a
Python condition selects, or traces both into a Tile IR ``if`` on a traced one; a name it
leaves unbound is deleted after it. A ``while`` becomes a function of its condition and one of
its body, of every name the body assigns, and one call of ``loops.run_while``, which runs
them as Python would while the condition is a Python value, or traces a Tile IR ``while``
once it is a traced one (a ``while`` with ``break``, ``continue``, ``return`` or ``else``
stays a Python loop, and a traced condition there is an error). Before that, a ``return`` under an ``if`` (outside
loops) moves the statements after the ``if`` into the branches that do not return, as
Triton's code generator does, so that every ``return`` ends a branch (a value ``return``
assigns the result, returned at the end). The rewritten code keeps the user's file name and
line numbers, so every traced op and every error points at the user's own line.
"""

import ast
import copy
import functools
import inspect
import textwrap

from .branches import RETURN_NAME
from .errors import user_error

RUNTIME = "__metile_loops"
_PREFIX = "__metile_"


def _is_tile_range(node):
    """tile_range(...), metile.tile_range(...) or metile.range(...) (Triton's tl.range)."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "tile_range") or (
        isinstance(func, ast.Attribute) and func.attr in ("tile_range", "range"))


def _is_python_range(node):
    """range(...) with positional bounds: a device loop when a bound is traced."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "range" and not node.keywords
            and 1 <= len(node.args) <= 3 and not any(isinstance(a, ast.Starred) for a in node.args))


def _peek(name):
    """``__metile_loops.peek(lambda: name)``: the value, or UNBOUND when it was never bound."""
    return ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), "peek", ast.Load()),
                    [ast.Lambda(ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                              kw_defaults=[], kwarg=None, defaults=[]),
                                ast.Name(name, ast.Load()))], [])


def _peeks(names):
    """The tuple of ``names``' values, each peeked (UNBOUND when unbound)."""
    return ast.Tuple([_peek(n) for n in names], ast.Load())


def _function(name, params, body):
    """``def name(*params): body``, a nested function of the rewrite."""
    return ast.FunctionDef(
        name=name,
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in params], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None)


def _assign_back(names, run):
    """``names = run`` (the runtime call returns the names' values), or the call alone."""
    if not names:
        return ast.Expr(run)
    return ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], run)


def _runtime(attr):
    return ast.Attribute(ast.Name(RUNTIME, ast.Load()), attr, ast.Load())


def _unbound_guard(name):
    """``if name is __metile_loops.UNBOUND: del name``."""
    return ast.If(ast.Compare(ast.Name(name, ast.Load()), [ast.Is()], [_runtime("UNBOUND")]),
                  [ast.Delete([ast.Name(name, ast.Del())])], [])


def _at(new, node):
    """Gives the generated expression ``new`` (not its user subexpressions) node's position."""
    _place_at_loop(new, node)
    return new


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _thunk(expr):
    return ast.Lambda(_no_args(), expr)


def _plain(expr):
    """A name or a number (maybe negated): a side of ``x if c else y`` that costs nothing and
    cannot fault, so that both sides may be computed and one selected."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _plain(expr.operand)
    return isinstance(expr, (ast.Name, ast.Constant))


def _has_named_expr(node):
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


class _Scope(ast.NodeVisitor):
    """Names a statement list binds in its own scope, and the statements that would leave
    the loop (break, continue, return); nested functions and classes are not entered."""

    def __init__(self):
        self.names = []
        self.exits = []
        self._loop_depth = 0

    def _bind(self, name):
        if not name.startswith(_PREFIX) and name not in self.names:
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node.id)

    def visit_FunctionDef(self, node):
        self._bind(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def _visit_comprehension(self, node):
        pass

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def visit_Import(self, node):
        for alias in node.names:
            self._bind((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def _visit_loop(self, node):
        self._loop_depth += 1
        self.generic_visit(node)
        self._loop_depth -= 1

    visit_For = visit_While = visit_AsyncFor = _visit_loop

    def visit_Break(self, node):
        if self._loop_depth == 0:
            self.exits.append((node, "break"))

    def visit_Continue(self, node):
        if self._loop_depth == 0:
            self.exits.append((node, "continue"))

    def visit_Return(self, node):
        self.exits.append((node, "return"))

    def visit_Global(self, node):
        self.exits.append((node, "global"))

    visit_Nonlocal = visit_Global


def _place_at_loop(new, loop):
    """Gives generated code the position of the loop's `for` keyword (an `if`'s `if`), so
    that the frame running it reports that line (the moved body keeps its own positions)."""
    stack = [new]
    while stack:
        n = stack.pop()
        if getattr(n, "lineno", None) is not None and n is not new:
            continue  # a node of the user's own code
        if "lineno" in n._attributes:
            n.lineno = n.end_lineno = loop.lineno
            n.col_offset, n.end_col_offset = loop.col_offset, loop.col_offset + 3
        stack.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, ast.stmt) or c is new)


class _LoopRewriter(ast.NodeTransformer):
    def __init__(self, filename):
        self.filename = filename
        self.count = 0
        self._root_seen = False

    def _error(self, node, rule):
        return user_error(f"tile_range: {rule}", (self.filename, node.lineno))

    def visit_FunctionDef(self, node):
        if not self._root_seen:  # the kernel itself; functions nested in it are left alone
            self._root_seen = True
            self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, ast.Name) and func.id in ("min", "max") and len(node.args) >= 2
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
            self.count += 1
            call = ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), "builtin_extreme",
                                          ast.Load()), [ast.Constant(func.id), *node.args], [])
            return ast.copy_location(call, node)
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        device = _is_tile_range(node.iter)
        if not device and not _is_python_range(node.iter):
            return node
        scope = _Scope()
        for statement in node.body:
            scope.visit(statement)
        if not device:  # a range loop that Python must run itself stays as it is
            if not isinstance(node.target, ast.Name) or node.orelse or scope.exits:
                return node
        elif not isinstance(node.target, ast.Name):
            raise self._error(node, "the loop variable must be a single name")
        elif node.orelse:
            raise self._error(node, "a for ... else over tile_range is not supported")
        for exit_node, what in scope.exits:
            raise self._error(exit_node, f"'{what}' cannot be used in a tile_range loop body "
                              "(the loop runs on the device; every iteration runs the whole body)")
        names = [n for n in scope.names if n != node.target.id]
        self.count += 1
        body_name = f"{_PREFIX}loop_body_{node.lineno}_{self.count}"
        # A body may leave a name unbound (a Python if on a constexpr, a name local to a
        # nested while): peek at it.
        body = _function(body_name, [node.target.id, *names],
                         [*node.body, ast.Return(_peeks(names))])
        if device:
            runner, iterable = "run_tile_loop", node.iter
        else:
            runner, iterable = "run_range_loop", ast.Tuple(node.iter.args, ast.Load())
        run = ast.Call(
            ast.Attribute(ast.Name(RUNTIME, ast.Load()), runner, ast.Load()),
            [iterable, ast.Name(body_name, ast.Load()), ast.Constant(tuple(names)),
             _peeks(names), ast.Constant(node.lineno)], [])
        assign = _assign_back(names, run)
        for new in (body, body.body[-1], assign):
            _place_at_loop(new, node)
        return [body, assign]

    def visit_If(self, node):
        text = ast.unparse(node.test)
        self.generic_visit(node)
        line = node.lineno
        then_scope, else_scope = _Scope(), _Scope()
        for statement in node.body:
            then_scope.visit(statement)
        for statement in node.orelse:
            else_scope.visit(statement)
        exits = then_scope.exits + else_scope.exits
        self.count += 1
        if exits:  # a branch leaves a loop or the function: it stays a Python `if`
            node.test = _at(ast.Call(_runtime("python_condition"),
                                     [node.test, ast.Constant(line), ast.Constant(exits[0][1])],
                                     []), node)
            return node
        names = then_scope.names + [n for n in else_scope.names if n not in then_scope.names]
        assigned = tuple((n in then_scope.names, n in else_scope.names) for n in names)
        new = []
        branches = []
        for kind, statements in (("then", node.body), ("else", node.orelse)):
            name = f"{_PREFIX}if_{kind}_{line}_{self.count}"
            new.append(_function(name, names, [*[_unbound_guard(n) for n in names], *statements,
                                               ast.Return(_peeks(names))]))
            branches.append(ast.Name(name, ast.Load()))
        run = ast.Call(_runtime("run_if"), [
            node.test, *branches, ast.Constant(tuple(names)), _peeks(names),
            ast.Constant(assigned), ast.Constant(line), ast.Constant(text)], [])
        new.append(_assign_back(names, run))
        new.extend(_unbound_guard(n) for n in names)
        for statement in new:
            _place_at_loop(statement, node)
        for branch in new[:2]:
            for statement in (*branch.body[:len(names)], branch.body[-1]):
                _place_at_loop(statement, node)
        return new

    def visit_IfExp(self, node):
        text = ast.unparse(node.test)
        self.generic_visit(node)
        if _has_named_expr(node.body) or _has_named_expr(node.orelse):
            return node
        self.count += 1
        call = ast.Call(_runtime("run_ifexp"), [
            node.test, _thunk(node.body), _thunk(node.orelse), ast.Constant(node.lineno),
            ast.Constant(text), ast.Constant(_plain(node.body) and _plain(node.orelse))], [])
        return _at(call, node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if any(_has_named_expr(v) for v in node.values[1:]):
            return node
        self.count += 1
        runner = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        result = node.values[-1]
        for left in reversed(node.values[:-1]):  # a and b and c: a and (b and c)
            result = ast.Call(_runtime(runner), [left, _thunk(result)], [])
        return _at(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.count += 1
        return _at(ast.Call(_runtime("logical_not"), [node.operand], []), node)

    def visit_While(self, node):
        text = ast.unparse(node.test)
        self.generic_visit(node)
        self.count += 1
        line = node.lineno
        scope = _Scope()
        for statement in node.body:
            scope.visit(statement)
        exit_kind = (scope.exits[0][1] if scope.exits else "else" if node.orelse
                     else "walrus" if _has_named_expr(node.test) else None)
        if exit_kind:  # it stays a Python `while`, so its condition must be a Python value
            node.test = _at(ast.Call(_runtime("while_condition"),
                                     [node.test, ast.Constant(line), ast.Constant(exit_kind)],
                                     []), node)
            return node
        # The condition and the body become functions of the names the body assigns;
        # run_while runs them as Python does while the condition is a Python value, and
        # traces them into a Tile IR while once it is a traced one.
        names = scope.names
        new = []
        functions = []
        for kind, statements in (("cond", [ast.Return(node.test)]),
                                 ("body", [*node.body, ast.Return(_peeks(names))])):
            name = f"{_PREFIX}while_{kind}_{line}_{self.count}"
            new.append(_function(name, names, [*[_unbound_guard(n) for n in names], *statements]))
            functions.append(ast.Name(name, ast.Load()))
        run = ast.Call(_runtime("run_while"), [
            *functions, ast.Constant(tuple(names)), _peeks(names), ast.Constant(line),
            ast.Constant(text)], [])
        new.append(_assign_back(names, run))
        new.extend(_unbound_guard(n) for n in names)
        for statement in new:
            _place_at_loop(statement, node)
        for function in new[:2]:
            for statement in function.body[:len(names)]:
                _place_at_loop(statement, node)
        _place_at_loop(new[0].body[-1], node)
        _place_at_loop(new[1].body[-1], node)
        return new


def _returns_outside_loops(statements):
    """Whether a `return` in ``statements`` is reached without entering a loop (or a nested
    function, class, with or try)."""
    for s in statements:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and (_returns_outside_loops(s.body)
                                      or _returns_outside_loops(s.orelse)):
            return True
    return False


def _always_returns(statements):
    for s in statements:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
    return False


def _move_after_returns(statements):
    """``statements`` with the statements after an `if` that may return moved into each of
    its branches that may fall through (Triton's code generator moves them into the else
    branch of a then-branch that returns), recursively; dead statements after a `return`
    dropped. Every `return` outside loops then ends its branch."""
    out = []
    for i, s in enumerate(statements):
        out.append(s)
        if isinstance(s, ast.Return):
            return out
        if isinstance(s, ast.If) and _returns_outside_loops([s]):
            rest = statements[i + 1:]
            then_falls, else_falls = not _always_returns(s.body), not _always_returns(s.orelse)
            body = s.body + (rest if then_falls else [])
            orelse = s.orelse + ((copy.deepcopy(rest) if then_falls else rest) if else_falls
                                 else [])
            s.body = _move_after_returns(body)
            s.orelse = _move_after_returns(orelse)
            return out
    return out


def _branch_returns(statements, found):
    """The `return` statements ending the branches of the `if`s in ``statements``."""
    for s in statements:
        if isinstance(s, ast.If):
            for branch in (s.body, s.orelse):
                if branch and isinstance(branch[-1], ast.Return):
                    found.append((branch, branch[-1]))
                _branch_returns(branch, found)
    return found


def _eliminate_returns(definition):
    """Rewrites the `return`s under `if`s of the function (outside loops) so that no branch
    returns: the statements after such an `if` move into its branches; then a bare `return`
    ending a branch is dropped, and a value `return` becomes ``_metile_return = value`` with
    ``return _metile_return`` at the end. Returns whether it changed anything."""
    if not any(isinstance(s, ast.If) and _returns_outside_loops([s]) for s in definition.body):
        return False
    definition.body = _move_after_returns(definition.body)
    found = _branch_returns(definition.body, [])
    with_value = any(r.value is not None for _, r in found)
    for branch, r in found:
        if with_value:
            value = r.value if r.value is not None else ast.Constant(None)
            branch[-1] = ast.copy_location(
                ast.Assign([ast.copy_location(ast.Name(RETURN_NAME, ast.Store()), r)], value), r)
        else:
            branch[-1] = ast.copy_location(ast.Pass(), r)
    if with_value:
        first = definition.body[0]
        definition.body.insert(0, ast.copy_location(
            ast.Assign([ast.Name(RETURN_NAME, ast.Store())], ast.Constant(None)), first))
        last = definition.body[-1]
        definition.body.append(ast.copy_location(
            ast.Return(ast.Name(RETURN_NAME, ast.Load())), last))
    return True


def _source_tree(fn):
    """The function's FunctionDef with the user's line numbers, or None without source."""
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first_line - 1)
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef):
        return None
    return definition


def source_text(fn):
    """The function's source text, or None when it has none (defined in a REPL, exec...)."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


def rewrite(fn, loops_runtime):
    """The function with its tile_range loops turned into traced loops (``fn`` itself when
    its source is unavailable or it has no such loop)."""
    definition = _source_tree(fn)
    if definition is None:
        return fn
    filename = fn.__code__.co_filename
    rewriter = _LoopRewriter(filename)
    moved = _eliminate_returns(definition)
    definition = rewriter.visit(definition)
    if rewriter.count == 0 and not moved:
        return fn
    definition.decorator_list = []
    definition.returns = None
    for arg in [*definition.args.posonlyargs, *definition.args.args, *definition.args.kwonlyargs]:
        arg.annotation = None
    # A factory binds the runtime and the function's closure variables (their current values).
    free = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(
        name=f"{_PREFIX}factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in [RUNTIME, *free]],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[definition, ast.Return(ast.Name(definition.name, ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace = {}
    exec(compile(module, filename, "exec", dont_inherit=True), fn.__globals__, namespace)
    cells = [cell.cell_contents for cell in (fn.__closure__ or ())]
    rewritten = namespace[factory.name](loops_runtime, *cells)
    rewritten.__defaults__ = fn.__defaults__
    rewritten.__kwdefaults__ = fn.__kwdefaults__
    return rewritten


_CONSTRUCTS = (
    (ast.If, "test", "a Python `if`"),
    (ast.While, "test", "a Python `while` loop"),
    (ast.IfExp, "test", "a conditional expression (`x if c else y`)"),
    (ast.Assert, "test", "an `assert`"),
    (ast.For, "iter", "a Python `for` loop that is not over metile.tile_range"),
    (ast.BoolOp, None, "`and` / `or`"),
    (ast.UnaryOp, None, "`not`"),
)


@functools.lru_cache(maxsize=64)
def _file_tree(filename):
    try:
        with open(filename, encoding="utf-8") as f:
            return ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None


def construct_at(filename, line):
    """The Python construct whose condition or iterable spans ``line`` (innermost first),
    e.g. "a Python `if`", or None when there is none."""
    tree = _file_tree(filename) if filename else None
    if tree is None:
        return None
    best = None
    for node in ast.walk(tree):
        for kind, field, name in _CONSTRUCTS:
            if not isinstance(node, kind) or (kind is ast.UnaryOp and not isinstance(node.op, ast.Not)):
                continue
            part = getattr(node, field) if field else node
            if part.lineno <= line <= part.end_lineno:
                span = part.end_lineno - part.lineno
                if best is None or span <= best[0]:
                    best = (span, name)
    return best[1] if best else None
