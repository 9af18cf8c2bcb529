#include "metile/ir/parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace metile::ir {

namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Kernel kernel() {
    skip_space();
    const size_t at = pos_;
    std::string header = word("'tile.kernel' or 'metal.kernel'");
    if (header == "tile.kernel")
      k_.dialect = Dialect::Tile;
    else if (header == "metal.kernel")
      k_.dialect = Dialect::Metal;
    else
      error("expected 'tile.kernel' or 'metal.kernel', got '" + header + "'", at);
    expect('@');
    k_.name = peek() == '"' ? string_literal() : word("a kernel name");
    expect('(');
    if (!eat(')')) {
      do param();
      while (eat(','));
      expect(')');
    }
    if (eat_keyword("attributes")) k_.attrs = attr_dict();
    expect('{');
    block_body(k_.body);
    skip_space();
    if (pos_ != text_.size()) error("expected the end of the input after the kernel", pos_);
    return std::move(k_);
  }

 private:
  [[noreturn]] void error(const std::string& message, size_t at) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw UserError(std::string(file_) + ":" + std::to_string(line) + ":" + std::to_string(col) +
                    ": " + message);
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  // Skips whitespace and // comments; returns whether a line ended on the way.
  bool skip_space() {
    bool newline = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n') {
        newline = true;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "//") {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    return newline;
  }

  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'", pos_);
  }

  std::string word(const std::string& what) {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    if (start == pos_) error("expected " + what, start);
    return std::string(text_.substr(start, pos_ - start));
  }

  bool at_keyword(std::string_view kw) {
    skip_space();
    return text_.substr(pos_, kw.size()) == kw &&
           (pos_ + kw.size() == text_.size() || !is_word_char(text_[pos_ + kw.size()]));
  }

  bool eat_keyword(std::string_view kw) {
    if (!at_keyword(kw)) return false;
    pos_ += kw.size();
    return true;
  }

  std::string string_literal() {
    expect('"');
    const size_t start = pos_ - 1;
    std::string r;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') error("unterminated string", start);
      char c = text_[pos_++];
      if (c == '"') return r;
      if (c != '\\') {
        r += c;
        continue;
      }
      char e = peek();
      ++pos_;
      if (e == 'n') {
        r += '\n';
      } else if (e == 't') {
        r += '\t';
      } else if (e == '"' || e == '\\') {
        r += e;
      } else if (e == 'x' && pos_ + 2 <= text_.size()) {
        int v = 0;
        auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16);
        if (ec != std::errc() || p != text_.data() + pos_ + 2)
          error("bad \\x escape in string", pos_ - 2);
        r += static_cast<char>(v);
        pos_ += 2;
      } else {
        error(std::string("unknown escape '\\") + e + "' in string", pos_ - 2);
      }
    }
  }

  // '%' followed by letters, digits and underscores; returns the name with its '%'.
  std::string value_name() {
    skip_space();
    const size_t start = pos_;
    if (peek() != '%') error("expected a value name such as %3", pos_);
    ++pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (pos_ == start + 1) error("expected a value name after '%'", start);
    return std::string(text_.substr(start, pos_ - start));
  }

  Type type() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (peek() == '<') {
      int depth = 0;
      do {
        if (text_[pos_] == '<') ++depth;
        if (text_[pos_] == '>') --depth;
        ++pos_;
      } while (depth > 0 && pos_ < text_.size() && text_[pos_] != '\n');
    }
    std::string_view text = text_.substr(start, pos_ - start);
    if (text.empty()) error("expected a type", start);
    auto t = parse_type(text);
    if (!t) error("malformed type '" + std::string(text) + "'", start);
    return *t;
  }

  ValueId define(const std::string& name, Type t, size_t at) {
    if (names_.count(name)) error("value " + name + " is defined twice", at);
    ValueId v = k_.new_value(std::move(t));
    names_[name] = v;
    return v;
  }

  ValueId use() {
    skip_space();
    const size_t at = pos_;
    std::string name = value_name();
    auto it = names_.find(name);
    if (it == names_.end()) error("use of undefined value " + name, at);
    return it->second;
  }

  void param() {
    skip_space();
    const size_t at = pos_;
    std::string name = value_name();
    expect(':');
    ValueId v = define(name, type(), at);
    Param p{std::isdigit(static_cast<unsigned char>(name[1])) ? "" : name.substr(1), v, ""};
    skip_space();
    if (peek() == '{') {
      const size_t attrs_at = pos_;
      for (const auto& [key, value] : attr_dict()) {
        auto* s = std::get_if<std::string>(&value);
        auto* n = std::get_if<int64_t>(&value);
        if (key == "divisibility" && n) {
          p.divisibility = *n;
          continue;
        }
        if (!s || (key != "access" && key != "name"))
          error(
              "parameter attributes are access = \"...\", name = \"...\" and divisibility = "
              "N, got " +
                  key,
              attrs_at);
        (key == "access" ? p.access : p.name) = *s;
      }
    }
    k_.value_names[v] = p.name;
    k_.params.push_back(p);
    k_.body.args.push_back(v);
  }

  Attr number() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      bool sign_ok = pos_ == start || text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E';
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
          ((c == '-' || c == '+') && sign_ok))
        ++pos_;
      else
        break;
    }
    std::string_view s = text_.substr(start, pos_ - start);
    if (!s.empty() && s[0] == '+') s.remove_prefix(1);
    const char* end = s.data() + s.size();
    bool is_float = s.find_first_of(".eEin") != std::string_view::npos;
    if (is_float) {
      double d = 0;
      auto [p, ec] = std::from_chars(s.data(), end, d);
      if (ec == std::errc() && p == end) return d;
    } else {
      int64_t i = 0;
      auto [p, ec] = std::from_chars(s.data(), end, i);
      if (ec == std::errc() && p == end) return i;
    }
    error("malformed number '" + std::string(text_.substr(start, pos_ - start)) + "'", start);
  }

  int64_t integer(const std::string& what) {
    skip_space();
    const size_t at = pos_;
    Attr v = number();
    if (!std::holds_alternative<int64_t>(v)) error("expected " + what + ", an integer", at);
    return std::get<int64_t>(v);
  }

  // #layout<(bit, ...), xor N, ept N>: a ThreadLayout (printer.cc writes this form).
  ThreadLayout layout() {
    const size_t at = pos_;
    if (!eat_keyword("#layout")) error("expected #layout<(bits), xor N, ept N>", at);
    expect('<');
    expect('(');
    std::vector<int> bits;
    if (!eat(')')) {
      do {
        skip_space();
        const size_t bit_at = pos_;
        const int64_t bit = integer("a bit position");
        if (bit < 0 || bit > std::numeric_limits<int>::max())
          error("bit position " + std::to_string(bit) + " is negative or too large", bit_at);
        bits.push_back(static_cast<int>(bit));
      } while (eat(','));
      expect(')');
    }
    expect(',');
    if (!eat_keyword("xor")) error("expected 'xor' in a #layout", pos_);
    const int64_t xor_mask = integer("the xor mask");
    expect(',');
    if (!eat_keyword("ept")) error("expected 'ept' (elements per thread) in a #layout", pos_);
    const int64_t elements_per_thread = integer("the elements per thread");
    expect('>');
    try {
      return ThreadLayout(std::move(bits), xor_mask, elements_per_thread);
    } catch (const UserError& e) {
      error(e.rule(), at);
    }
  }

  Attr attr_value() {
    skip_space();
    const size_t at = pos_;
    char c = peek();
    if (c == '"') return string_literal();
    if (c == '#') return layout();
    if (c == '[') {
      ++pos_;
      std::vector<int64_t> list;
      if (eat(']')) return list;
      do {
        Attr v = number();
        if (!std::holds_alternative<int64_t>(v)) error("lists hold integers only", at);
        list.push_back(std::get<int64_t>(v));
      } while (eat(','));
      expect(']');
      return list;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || at_keyword("inf") ||
        at_keyword("nan"))
      return number();
    std::string w = word("an attribute value");
    if (auto d = parse_dtype(w)) return *d;
    error("expected an attribute value (number, string, dtype, [list] or #layout<...>), got '" + w +
              "'",
          at);
  }

  Attrs attr_dict() {
    expect('{');
    Attrs attrs;
    if (eat('}')) return attrs;
    do {
      skip_space();
      const size_t at = pos_;
      std::string key = peek() == '"' ? string_literal() : word("an attribute name");
      expect('=');
      if (!attrs.emplace(key, attr_value()).second)
        error("attribute '" + key + "' is given twice", at);
    } while (eat(','));
    expect('}');
    return attrs;
  }

  // '{' starts an attribute dictionary when a name and '=' follow, a region otherwise.
  bool at_attr_dict() {
    skip_space();
    if (peek() != '{') return false;
    const size_t saved = pos_;
    ++pos_;
    skip_space();
    bool dict = false;
    if (peek() == '"') {
      string_literal();
      dict = eat('=');
    } else if (is_word_char(peek())) {
      while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
      dict = eat('=');
    }
    pos_ = saved;
    return dict;
  }

  void block_body(Block& b) {
    while (!eat('}')) {
      if (pos_ >= text_.size()) error("expected '}' before the end of the input", pos_);
      op(b);
    }
  }

  void region(Block& b) {
    expect('{');
    if (eat('^')) {
      expect('(');
      if (!eat(')')) {
        do {
          skip_space();
          const size_t at = pos_;
          std::string name = value_name();
          expect(':');
          b.args.push_back(define(name, type(), at));
        } while (eat(','));
        expect(')');
      }
      expect(':');
    }
    block_body(b);
  }

  void op(Block& b) {
    skip_space();
    const size_t at = pos_;
    std::vector<std::string> result_names;
    if (peek() == '%') {
      do result_names.push_back(value_name());
      while (eat(','));
      expect('=');
    }
    skip_space();
    const size_t name_at = pos_;
    std::string name = word("an op name");
    auto kind = parse_op_name(name);
    if (!kind) error("unknown op '" + name + "'", name_at);
    Op o;
    o.kind = *kind;
    // Operands start on the op's line, so an operand-less op is not followed by the next line.
    if (!skip_space() && peek() == '%') {
      do o.operands.push_back(use());
      while (eat(','));
    }
    if (at_attr_dict()) o.attrs = attr_dict();
    std::vector<Type> types;
    if (eat(':')) {
      do types.push_back(type());
      while (eat(','));
    }
    if (types.size() != result_names.size())
      error(name + " defines " + std::to_string(result_names.size()) + " result(s) but lists " +
                std::to_string(types.size()) + " type(s)",
            at);
    skip_space();
    if (peek() == '{') {
      // The second region: an if's else, a while's do.
      do region(o.regions.emplace_back());
      while (eat_keyword(o.kind == OpKind::While ? "do" : "else"));
    }
    for (size_t i = 0; i < types.size(); ++i)
      o.results.push_back(define(result_names[i], types[i], at));
    if (eat_keyword("loc")) {
      expect('(');
      o.loc.file = string_literal();
      expect(':');
      Attr line = number();
      if (!std::holds_alternative<int64_t>(line)) error("a location line is an integer", pos_);
      o.loc.line = static_cast<int>(std::get<int64_t>(line));
      expect(')');
    }
    b.ops.push_back(std::move(o));
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  Kernel k_;
  std::map<std::string, ValueId> names_;
};

}  // namespace

Kernel parse(std::string_view text, std::string_view filename) {
  return Parser(text, filename).kernel();
}

}  // namespace metile::ir
