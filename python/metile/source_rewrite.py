"""The kernel function's source, rewritten so that ``for i in metile.tile_range(...)``
becomes a traced loop, and ``for i in range(...)`` one too when a bound is a traced value
(over Python numbers it runs while tracing, as before); and so that the builtins ``min(a, b,
...)`` and ``max(...)`` take traced values as Triton's do (``loops.builtin_extreme``).

Each such loop body turns into a nested function of (induction variable, every name the
body assigns); after it, one call runs the body through ``loops.run_tile_loop`` and assigns
the names back. At run time, a name that is bound before the loop is loop-carried; the
others are body-local. The rewritten code keeps the user's file name and line numbers, so
every traced op and every error points at the user's own line.
"""

import ast
import functools
import inspect
import textwrap

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
    """Gives generated code the position of the loop's `for` keyword, so that the frame
    running it reports the loop's line (the moved body keeps its own positions)."""
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
        args = [ast.arg(arg=n) for n in [node.target.id, *names]]
        # A range body may leave a name unbound (a Python if on a constexpr): peek at it.
        results = [_peek(n) if not device else ast.Name(n, ast.Load()) for n in names]
        body = ast.FunctionDef(
            name=body_name,
            args=ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=None, defaults=[]),
            body=[*node.body, ast.Return(ast.Tuple(results, ast.Load()))],
            decorator_list=[], returns=None, type_comment=None)
        peeks = [_peek(n) for n in names]
        if device:
            runner, iterable = "run_tile_loop", node.iter
        else:
            runner, iterable = "run_range_loop", ast.Tuple(node.iter.args, ast.Load())
        run = ast.Call(
            ast.Attribute(ast.Name(RUNTIME, ast.Load()), runner, ast.Load()),
            [iterable, ast.Name(body_name, ast.Load()), ast.Constant(tuple(names)),
             ast.Tuple(peeks, ast.Load()), ast.Constant(node.lineno)], [])
        if names:
            assign = ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())],
                                run)
        else:
            assign = ast.Expr(run)
        for new in (body, body.body[-1], assign):
            _place_at_loop(new, node)
        return [body, assign]


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
    definition = rewriter.visit(definition)
    if rewriter.count == 0:
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
