//! The code's shape holds (docs/ARCHITECTURE.md): the workbench's modules form layers whose
//! imports only go down, no two files of a crate import each other (directly or round a
//! circle), no file under `*/src` is over 700 lines, no function over 120 nor with more
//! than six parameters (tests excepted), and nothing imports with a glob outside tests.
//!
//! The sources are parsed with `syn`, so a path in a comment or a string is not an import,
//! and every path is seen: `use` trees and paths written inline (`crate::budget::GRID`)
//! alike. A path is resolved to the file of the longest module prefix it names; a path
//! through a parent's re-export resolves to the parent, which is what makes a child that
//! reaches its siblings through its parent a cycle.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The workbench's layers, bottom first: a module may import from its own top-level module
/// and from modules of a lower layer, never from one of its own layer or above.
const WORKBENCH_LAYERS: &[&[&str]] = &[
    // What to run: the scenario file, its checks and defaults.
    &["scenario"],
    // The crate's error, which names scenario errors.
    &["error"],
    // Formats and the in-process load: samples in, HdrHistogram logs out, a bounded load
    // on an in-process agent, SSH deployment, what /proc says of a process's threads.
    &["samples", "hlog", "load", "deploy", "procfs"],
    // The methodology: a pure state machine, observations in, decisions and results out.
    &["coordinator"],
    // What is made from results: the latency budget, OpenMetrics, records on disk.
    &["budget", "metrics", "record"],
    // A run (agents, the coordinator, the budget, the record), and the reports of records.
    &["session", "report"],
    // Two targets compared in interleaved blocks, and the report of a comparison (drawn
    // with the reports' plots).
    &["compare"],
    // The front ends of a session: the terminal UI and `vernier validate`.
    &["tui", "validate"],
    // One function per subcommand.
    &["commands"],
    // The command line and its dispatch.
    &["cli"],
];

/// The crates whose files are held short, their functions too, and without glob imports.
const CRATES: &[&str] = &["stats", "protocols", "agent", "fixtures", "workbench"];

/// The crates whose files must not import each other round a circle: all of them. What a
/// parent's children share lives in a sibling file of its own, never in the parent.
const ACYCLIC_CRATES: &[&str] = &["stats", "protocols", "agent", "fixtures", "workbench"];

/// The longest a file under `*/src` may be, lines, its tests not counted.
const MAX_FILE_LINES: usize = 700;

/// The longest a function outside tests may be, lines.
const MAX_FN_LINES: usize = 99;

/// The most parameters a function outside tests may take, `self` not counted: past it,
/// the caller's arguments are a row of positions to get right, and some of them belong
/// together in a type (an options struct, or the thing they describe).
const MAX_PARAMETERS: usize = 6;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One source file of a crate: its module path (`["coordinator", "point"]`), its path on
/// disk and its parsed syntax.
struct Source {
    module: Vec<String>,
    path: PathBuf,
    text: String,
    syntax: syn::File,
}

impl Source {
    fn name(&self) -> String {
        self.path
            .strip_prefix(root())
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }

    /// A file that holds only tests: `tests.rs`, or anything under a `tests/` directory.
    fn is_tests(&self) -> bool {
        self.module.iter().any(|m| m == "tests")
    }
}

/// Every `.rs` file under `crate_dir/src`, parsed; `lib.rs` and `main.rs` are the root.
fn sources(crate_dir: &str) -> Vec<Source> {
    let src = root().join(crate_dir).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let syntax = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", path.display()));
            let relative = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module == ["lib"] || module == ["main"] {
                module.clear();
            }
            Source {
                module,
                path,
                text,
                syntax,
            }
        })
        .collect()
}

/// Whether attributes hold `#[cfg(test)]`.
fn is_test_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The `Visit` methods of a visitor that looks at shipped code only: each skips the
/// `#[cfg(test)]` modules, functions or impls (`mod`, `fn`, `impl`) and walks the rest.
macro_rules! skip_tests {
    ($a:lifetime: $($kind:ident),+) => { $(skip_tests!(@ $a $kind);)+ };
    (@ $a:lifetime mod) => {
        fn visit_item_mod(&mut self, m: &$a syn::ItemMod) {
            if !is_test_cfg(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
    };
    (@ $a:lifetime fn) => {
        fn visit_item_fn(&mut self, f: &$a syn::ItemFn) {
            if !is_test_cfg(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }
    };
    (@ $a:lifetime impl) => {
        fn visit_item_impl(&mut self, i: &$a syn::ItemImpl) {
            if !is_test_cfg(&i.attrs) {
                syn::visit::visit_item_impl(self, i);
            }
        }
    };
}

/// The paths a file names outside its tests, each as written (`["crate", "budget",
/// "GRID"]`), with the line it is on; and its glob imports.
#[derive(Default)]
struct Paths {
    paths: Vec<(Vec<String>, usize)>,
    globs: Vec<usize>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.paths.push((path, n.ident.span().start().line));
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.paths.push((path, r.ident.span().start().line));
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.globs.push(line);
                self.paths.push((prefix.clone(), line));
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'a> Visit<'a> for Paths {
    skip_tests!('a: mod, fn, impl);
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if !is_test_cfg(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }
    fn visit_path(&mut self, p: &'a syn::Path) {
        if p.segments.len() > 1 {
            let path = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.paths
                .push((path, p.segments[0].ident.span().start().line));
        }
        syn::visit::visit_path(self, p);
    }
}

/// The file `path`, named in `from`, resolves to: the longest module prefix of its absolute
/// form, or `None` for another crate's path or a name in scope.
fn resolve(
    modules: &BTreeSet<Vec<String>>,
    from: &[String],
    path: &[String],
) -> Option<Vec<String>> {
    let first = path.first()?;
    let absolute: Vec<String> = match first.as_str() {
        "crate" => path[1..].to_vec(),
        "self" => from.iter().chain(&path[1..]).cloned().collect(),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = &from[..from.len().checked_sub(ups)?];
            base.iter().chain(&path[ups..]).cloned().collect()
        }
        // A child module of this one, named by its name (`use point::Point`).
        child => {
            let mut inner = from.to_vec();
            inner.push(child.to_string());
            if !modules.contains(&inner) {
                return None;
            }
            from.iter().chain(path).cloned().collect()
        }
    };
    (0..=absolute.len())
        .rev()
        .map(|k| absolute[..k].to_vec())
        .find(|prefix| modules.contains(prefix))
}

/// Each non-test file's imports of other files of its crate: `(from, to, line)`.
fn imports(sources: &[Source]) -> Vec<(usize, usize, usize)> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let index: BTreeMap<&Vec<String>, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.module, i))
        .collect();
    let mut edges = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        if source.is_tests() {
            continue;
        }
        let mut paths = Paths::default();
        paths.visit_file(&source.syntax);
        for (path, line) in paths.paths {
            if let Some(to) = resolve(&modules, &source.module, &path)
                && to != source.module
            {
                edges.push((i, index[&to], line));
            }
        }
    }
    edges
}

fn layer_of(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    WORKBENCH_LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
}

/// The imports among `sources` that climb a layer, each named by file and line.
fn upward(sources: &[Source]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, to, line) in imports(sources) {
        let (a, b) = (&sources[from], &sources[to]);
        let (Some(la), Some(lb)) = (layer_of(&a.module), layer_of(&b.module)) else {
            continue; // The crate's root imports anything: it is the table of contents.
        };
        if a.module[0] != b.module[0] && lb >= la {
            wrong.push(format!(
                "{}:{line} imports {} (`{}`, layer {lb}) from `{}` (layer {la}): \
                 a layer imports only from the layers below it",
                a.name(),
                b.name(),
                b.module[0],
                a.module[0],
            ));
        }
    }
    wrong
}

#[test]
fn the_workbench_imports_only_go_down() {
    let sources = sources("workbench");
    for source in &sources {
        if let Some(top) = source.module.first() {
            assert!(
                layer_of(&source.module).is_some(),
                "{}: module `{top}` is in no layer of WORKBENCH_LAYERS (tests/layers.rs): \
                 give it one, and docs/ARCHITECTURE.md a line",
                source.name()
            );
        }
    }
    let wrong = upward(&sources);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The circles among `sources`' files (Tarjan's strongly connected components), each
/// named by its files and the imports that close it.
fn cycles(sources: &[Source]) -> Vec<String> {
    let edges = imports(sources);
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); sources.len()];
    let mut lines = BTreeMap::new();
    for &(a, b, line) in &edges {
        next[a].insert(b);
        lines.entry((a, b)).or_insert(line);
    }
    let components = strongly_connected(&next);
    components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let inside: BTreeSet<usize> = component.iter().copied().collect();
            let mut arrows = Vec::new();
            for &a in &component {
                for &b in &next[a] {
                    if inside.contains(&b) {
                        arrows.push(format!(
                            "  {}:{} imports {}",
                            sources[a].name(),
                            lines[&(a, b)],
                            sources[b].name()
                        ));
                    }
                }
            }
            arrows.sort();
            format!(
                "a circle of {} files:\n{}",
                component.len(),
                arrows.join("\n")
            )
        })
        .collect()
}

/// Tarjan's algorithm, iterative (no recursion depth to worry about).
fn strongly_connected(next: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0; n]);
    let (mut on_stack, mut stack, mut out) = (vec![false; n], Vec::new(), Vec::new());
    let mut counter = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        work.push((start, next[start].iter().copied().collect()));
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, next[w].iter().copied().collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

#[test]
fn no_two_files_import_each_other() {
    let mut wrong = Vec::new();
    for krate in ACYCLIC_CRATES {
        for circle in cycles(&sources(krate)) {
            wrong.push(format!("{krate}: {circle}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "files that import each other (move what both need into a file of its own):\n{}",
        wrong.join("\n")
    );
}

/// The lines of `source` outside `#[cfg(test)]` items.
fn lines_outside_tests(source: &Source) -> usize {
    let total = source.text.lines().count();
    let tests: usize = source
        .syntax
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if is_test_cfg(&m.attrs) => Some(item_lines(&m.attrs, m)),
            syn::Item::Fn(f) if is_test_cfg(&f.attrs) => Some(item_lines(&f.attrs, f)),
            syn::Item::Impl(i) if is_test_cfg(&i.attrs) => Some(item_lines(&i.attrs, i)),
            _ => None,
        })
        .sum();
    total - tests
}

/// The lines an item spans, its attributes included.
fn item_lines(attrs: &[syn::Attribute], item: &impl syn::spanned::Spanned) -> usize {
    let start = attrs.first().map_or(item.span().start().line, |a| {
        a.pound_token.span.start().line
    });
    item.span().end().line - start + 1
}

#[test]
fn files_are_short() {
    let mut wrong = Vec::new();
    for krate in CRATES {
        for source in sources(krate).iter().filter(|s| !s.is_tests()) {
            let lines = lines_outside_tests(source);
            if lines > MAX_FILE_LINES {
                wrong.push(format!("{}: {lines} lines", source.name()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "files over {MAX_FILE_LINES} lines outside their tests (split them by idea):\n{}",
        wrong.join("\n")
    );
}

/// The functions longer than [`MAX_FN_LINES`] outside tests: `(name, line, lines)`.
#[derive(Default)]
struct LongFunctions(Vec<(String, usize, usize)>);

impl LongFunctions {
    fn check(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        let lines = end - start + 1;
        if lines > MAX_FN_LINES {
            self.0.push((sig.ident.to_string(), start, lines));
        }
    }
}

impl<'a> Visit<'a> for LongFunctions {
    skip_tests!('a: mod, impl);
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.check(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn functions_are_short() {
    let mut wrong = Vec::new();
    for krate in CRATES {
        for source in sources(krate).iter().filter(|s| !s.is_tests()) {
            let mut long = LongFunctions::default();
            long.visit_file(&source.syntax);
            for (name, line, lines) in long.0 {
                wrong.push(format!(
                    "{}:{line}: `{name}` is {lines} lines",
                    source.name()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "functions over {MAX_FN_LINES} lines outside tests (split them into named steps):\n{}",
        wrong.join("\n")
    );
}

/// The functions outside tests with more than [`MAX_PARAMETERS`] parameters (`self` not
/// counted): `(name, line, parameters)`.
#[derive(Default)]
struct ManyParameters(Vec<(String, usize, usize)>);

impl ManyParameters {
    fn check(&mut self, sig: &syn::Signature) {
        let count = sig
            .inputs
            .iter()
            .filter(|arg| matches!(arg, syn::FnArg::Typed(_)))
            .count();
        if count > MAX_PARAMETERS {
            self.0
                .push((sig.ident.to_string(), sig.fn_token.span.start().line, count));
        }
    }
}

impl<'a> Visit<'a> for ManyParameters {
    skip_tests!('a: mod, impl);
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig);
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig);
            syn::visit::visit_trait_item_fn(self, f);
        }
    }
}

#[test]
fn functions_take_few_parameters() {
    let mut wrong = Vec::new();
    for krate in CRATES {
        for source in sources(krate).iter().filter(|s| !s.is_tests()) {
            let mut many = ManyParameters::default();
            many.visit_file(&source.syntax);
            for (name, line, count) in many.0 {
                wrong.push(format!(
                    "{}:{line}: `{name}` takes {count} parameters",
                    source.name()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "functions with more than {MAX_PARAMETERS} parameters outside tests, `self` not \
         counted (group those that belong together in a type):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn nothing_imports_with_a_glob_outside_tests() {
    let mut wrong = Vec::new();
    for krate in CRATES {
        for source in sources(krate).iter().filter(|s| !s.is_tests()) {
            let mut paths = Paths::default();
            paths.visit_file(&source.syntax);
            for line in paths.globs {
                wrong.push(format!("{}:{line}", source.name()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "glob imports (name what is imported):\n{}",
        wrong.join("\n")
    );
}

/// The checks above can fail: a made-up crate whose coordinator imports the session, whose
/// two files import each other, whose glob import is seen, and whose seven-parameter
/// function is (its six-parameter method, and its tests' seven, are not).
#[test]
fn the_checks_see_what_they_look_for() {
    let file = |module: &[&str], text: &str| Source {
        module: module.iter().map(|s| s.to_string()).collect(),
        path: root().join(format!("made-up/{}.rs", module.join("/"))),
        text: text.to_string(),
        syntax: syn::parse_file(text).unwrap(),
    };
    let sources = vec![
        file(
            &["coordinator"],
            "use crate::session::Run; pub struct Point;",
        ),
        file(
            &["session"],
            "use crate::coordinator::Point; pub struct Run;",
        ),
        file(&["budget", "queue"], "fn f() -> f64 { super::GRID }"),
        file(
            &["budget"],
            "pub const GRID: f64 = 1.0; use queue::*; mod queue;",
        ),
    ];
    let edges = imports(&sources);
    assert!(edges.contains(&(0, 1, 1)), "{edges:?}");
    assert!(edges.contains(&(2, 3, 1)), "{edges:?}");
    assert_eq!(cycles(&sources).len(), 2, "{:?}", cycles(&sources));
    // The coordinator's import of the session climbs; the session's of the coordinator
    // does not, nor the budget's of its own child.
    let climbs = upward(&sources);
    assert_eq!(climbs.len(), 1, "{climbs:?}");
    assert!(
        climbs[0].contains("made-up/coordinator.rs:1 imports"),
        "{climbs:?}"
    );
    let mut paths = Paths::default();
    paths.visit_file(&sources[3].syntax);
    assert_eq!(paths.globs, vec![1]);
    // A path in a comment or a string is no import.
    let quiet = vec![
        file(
            &["coordinator"],
            "// crate::session::Run\nconst S: &str = \"crate::session\";",
        ),
        file(&["session"], ""),
    ];
    assert!(imports(&quiet).is_empty());
    // Seven parameters are one too many, wherever the function is; `self` is not one of
    // them, and a test's function is not held to it.
    let parameters = file(
        &["budget"],
        "pub fn seven(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8) {}\n\
         pub struct Part;\n\
         impl Part {\n\
             pub fn six(&self, a: u8, b: u8, c: u8, d: u8, e: u8, f: u8) {}\n\
         }\n\
         pub trait Split {\n\
             fn seven(&mut self, a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8);\n\
         }\n\
         #[cfg(test)]\n\
         mod tests {\n\
             fn seven(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8) {}\n\
         }",
    );
    let mut many = ManyParameters::default();
    many.visit_file(&parameters.syntax);
    assert_eq!(
        many.0,
        vec![("seven".to_string(), 1, 7), ("seven".to_string(), 7, 7)]
    );
}

/// The constants a policy file declares (`const NAME`, in items and impls), outside tests.
#[derive(Default)]
struct PolicyConstants(BTreeSet<String>);

impl<'a> Visit<'a> for PolicyConstants {
    skip_tests!('a: mod);
    fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
        self.0.insert(c.ident.to_string());
    }
    fn visit_impl_item_const(&mut self, c: &'a syn::ImplItemConst) {
        self.0.insert(c.ident.to_string());
    }
}

/// The comparisons (`<`, `>`, `<=`, `>=`) outside tests that have one of `names` as an
/// operand, or inside an operand's arithmetic: (the constant, the line).
struct ComparedConstants<'n> {
    names: &'n BTreeSet<String>,
    found: Vec<(String, usize)>,
}

impl ComparedConstants<'_> {
    /// The policy constants an operand names: itself, or in its arithmetic, brackets,
    /// negation, casts and references (not inside calls, which may be policy's own).
    fn named_in(&self, e: &syn::Expr, out: &mut Vec<(String, usize)>) {
        match e {
            syn::Expr::Path(p) => {
                if let Some(last) = p.path.segments.last() {
                    let name = last.ident.to_string();
                    if self.names.contains(&name) {
                        out.push((name, last.ident.span().start().line));
                    }
                }
            }
            syn::Expr::Binary(b) => {
                self.named_in(&b.left, out);
                self.named_in(&b.right, out);
            }
            syn::Expr::Paren(p) => self.named_in(&p.expr, out),
            syn::Expr::Unary(u) => self.named_in(&u.expr, out),
            syn::Expr::Cast(c) => self.named_in(&c.expr, out),
            syn::Expr::Reference(r) => self.named_in(&r.expr, out),
            syn::Expr::Field(f) => self.named_in(&f.base, out),
            _ => {}
        }
    }
}

impl<'a> Visit<'a> for ComparedConstants<'_> {
    skip_tests!('a: mod, fn, impl);
    fn visit_expr_binary(&mut self, b: &'a syn::ExprBinary) {
        if matches!(
            b.op,
            syn::BinOp::Lt(_) | syn::BinOp::Gt(_) | syn::BinOp::Le(_) | syn::BinOp::Ge(_)
        ) {
            let mut found = Vec::new();
            self.named_in(&b.left, &mut found);
            self.named_in(&b.right, &mut found);
            self.found.extend(found);
        }
        syn::visit::visit_expr_binary(self, b);
    }
}

/// Whether a source is a policy file (`policy.rs`, wherever it is).
fn is_policy(source: &Source) -> bool {
    source.module.last().is_some_and(|m| m == "policy")
}

/// Every threshold compared outside the policy files: "file:line: NAME".
fn thresholds_compared_outside_policy(sources: &[Source]) -> Vec<String> {
    let mut names = PolicyConstants::default();
    for source in sources.iter().filter(|s| is_policy(s)) {
        names.visit_file(&source.syntax);
    }
    let mut wrong = Vec::new();
    for source in sources.iter().filter(|s| !is_policy(s) && !s.is_tests()) {
        let mut compared = ComparedConstants {
            names: &names.0,
            found: Vec::new(),
        };
        compared.visit_file(&source.syntax);
        for (name, line) in compared.found {
            wrong.push(format!("{}:{line}: {name}", source.name()));
        }
    }
    wrong
}

/// A threshold of the methodology is applied by one function of a policy file, which
/// every caller asks (`policy::is_heavy(h)`), so two paths that judge the same figures
/// never disagree: no constant a policy file declares is compared (`<`, `>`, `<=`, `>=`)
/// anywhere else, outside tests.
#[test]
fn no_threshold_is_compared_outside_policy() {
    let wrong = thresholds_compared_outside_policy(&sources("workbench"));
    assert!(
        wrong.is_empty(),
        "policy constants compared outside a policy.rs (give policy.rs a function that \
         applies the threshold, and call it):\n{}",
        wrong.join("\n")
    );
    // The check sees what it looks for: a threshold compared in a point's file, inside
    // arithmetic too, but not in the policy file, nor a constant that is only printed.
    let file = |module: &[&str], text: &str| Source {
        module: module.iter().map(|s| s.to_string()).collect(),
        path: root().join(format!("made-up/{}.rs", module.join("/"))),
        text: text.to_string(),
        syntax: syn::parse_file(text).unwrap(),
    };
    let made_up = vec![
        file(
            &["coordinator", "policy"],
            "pub const HEAVY: f64 = 2.0; pub fn is_heavy(h: f64) -> bool { h > HEAVY }",
        ),
        file(
            &["coordinator", "point"],
            "fn a(h: f64) -> bool { h >= policy::HEAVY }\n\
             fn b(h: f64, w: f64) -> bool { (2.0 * HEAVY) * w < h }\n\
             fn c() -> String { format!(\"{}\", HEAVY) }\n\
             fn d(h: f64) -> bool { is_heavy(h) }",
        ),
    ];
    assert_eq!(
        thresholds_compared_outside_policy(&made_up),
        vec![
            "made-up/coordinator/point.rs:1: HEAVY".to_string(),
            "made-up/coordinator/point.rs:2: HEAVY".to_string(),
        ]
    );
}
