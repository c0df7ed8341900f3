//===- XmlReader.cpp - the XML that algorithm files are written in --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "XmlReader.h"

#include "llvm/ADT/StringExtras.h"

using namespace sdma::xml;

const Attribute *Element::find(llvm::StringRef name) const {
  for (const Attribute &a : attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {

/// A cursor over the text that knows its line and column.
class Reader {
public:
  explicit Reader(llvm::StringRef text) : text_(text) {}

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool startsWith(llvm::StringRef s) const {
    return text_.substr(pos_).starts_with(s);
  }
  Position position() const { return at_; }
  void advance(size_t n = 1) {
    for (; n && pos_ < text_.size(); --n, ++pos_) {
      if (text_[pos_] == '\n') {
        ++at_.line;
        at_.column = 1;
      } else {
        ++at_.column;
      }
    }
  }
  void skipSpace() {
    while (!atEnd() && llvm::isSpace(peek()))
      advance();
  }
  /// Skips whitespace, comments, the declaration and processing
  /// instructions; false (with `error`) for an unterminated one.
  bool skipMisc() {
    for (;;) {
      skipSpace();
      llvm::StringRef end = startsWith("<!--") ? "-->"
                            : startsWith("<?") ? "?>"
                                               : "";
      if (end.empty())
        return true;
      Position start = at_;
      size_t close = text_.find(end, pos_ + 2);
      if (close == llvm::StringRef::npos)
        return fail(start, end == "-->" ? "a comment is not closed ('-->')"
                                        : "'<?' is not closed ('?>')");
      advance(close + end.size() - pos_);
    }
  }
  bool isNameChar(char c) const {
    return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' || c == ':';
  }
  std::string name() {
    size_t start = pos_;
    while (!atEnd() && isNameChar(peek()))
      advance();
    return text_.substr(start, pos_ - start).str();
  }
  bool fail(Position at, std::string message) {
    error = std::move(message);
    where = at;
    return false;
  }

  std::unique_ptr<Element> element(int depth = 0);

  std::string error;
  Position where;

private:
  bool attributeValue(Attribute &a);
  bool content(Element &e, int depth);

  llvm::StringRef text_;
  size_t pos_ = 0;
  Position at_;
};

/// The value between quotes, entities decoded.
bool Reader::attributeValue(Attribute &a) {
  char quote = peek();
  if (quote != '"' && quote != '\'')
    return fail(position(),
                "the value of attribute '" + a.name + "' must be quoted");
  advance();
  a.valueAt = position();
  for (;;) {
    if (atEnd())
      return fail(a.valueAt,
                  "the value of attribute '" + a.name + "' is not closed");
    char c = peek();
    if (c == quote) {
      advance();
      return true;
    }
    if (c == '<')
      return fail(position(), "'<' in the value of attribute '" + a.name +
                                  "' (write &lt;)");
    if (c != '&') {
      a.value.push_back(c);
      advance();
      continue;
    }
    Position amp = position();
    size_t semi = text_.find(';', pos_);
    llvm::StringRef entity =
        semi == llvm::StringRef::npos ? "" : text_.slice(pos_ + 1, semi);
    static const std::pair<llvm::StringRef, char> named[] = {
        {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    bool known = false;
    for (auto [n, ch] : named)
      if (entity == n) {
        a.value.push_back(ch);
        known = true;
      }
    unsigned code = 0;
    if (!known && entity.size() > 1 && entity[0] == '#' &&
        !(entity[1] == 'x' ? entity.drop_front(2).getAsInteger(16, code)
                           : entity.drop_front(1).getAsInteger(10, code)) &&
        code > 0 && code < 128) {
      a.value.push_back(char(code));
      known = true;
    }
    if (!known)
      return fail(amp, "unknown entity '&" + entity.str() +
                           ";' in attribute '" + a.name + "'");
    advance(semi + 1 - pos_);
  }
}

/// Children up to the closing tag of `e`.
bool Reader::content(Element &e, int depth) {
  for (;;) {
    if (!skipMisc())
      return false;
    if (atEnd())
      return fail(e.at, "<" + e.name + "> is not closed");
    if (startsWith("</")) {
      Position close = position();
      advance(2);
      std::string n = name();
      skipSpace();
      if (n != e.name)
        return fail(close, "</" + n + "> closes <" + e.name + "> (opened at " +
                               std::to_string(e.at.line) + ":" +
                               std::to_string(e.at.column) + ")");
      if (peek() != '>')
        return fail(position(), "expected '>' after </" + n);
      advance();
      return true;
    }
    if (peek() != '<')
      return fail(position(), "text inside <" + e.name +
                                  "> (an algorithm file holds elements only)");
    std::unique_ptr<Element> child = element(depth + 1);
    if (!child)
      return false;
    e.children.push_back(std::move(child));
  }
}

std::unique_ptr<Element> Reader::element(int depth) {
  auto e = std::make_unique<Element>();
  e->at = position();
  if (depth > 64) {
    fail(position(), "elements nested more than 64 deep");
    return nullptr;
  }
  if (peek() != '<') {
    fail(position(), "expected an element ('<')");
    return nullptr;
  }
  advance();
  e->name = name();
  if (e->name.empty()) {
    fail(position(), "expected an element name after '<'");
    return nullptr;
  }
  for (;;) {
    bool spaced = llvm::isSpace(peek());
    skipSpace();
    if (startsWith("/>")) {
      advance(2);
      return e;
    }
    if (peek() == '>') {
      advance();
      return content(*e, depth) ? std::move(e) : nullptr;
    }
    if (atEnd()) {
      fail(e->at, "<" + e->name + " is not closed ('>')");
      return nullptr;
    }
    Attribute a;
    a.at = position();
    a.name = name();
    if (a.name.empty() || !spaced) {
      fail(position(),
           std::string("unexpected '") + peek() + "' in <" + e->name + ">");
      return nullptr;
    }
    if (e->find(a.name)) {
      fail(a.at,
           "attribute '" + a.name + "' appears twice in <" + e->name + ">");
      return nullptr;
    }
    skipSpace();
    if (peek() != '=') {
      fail(position(), "expected '=' after attribute '" + a.name + "'");
      return nullptr;
    }
    advance();
    skipSpace();
    if (!attributeValue(a))
      return nullptr;
    e->attributes.push_back(std::move(a));
  }
}

} // namespace

std::unique_ptr<Element> sdma::xml::parse(llvm::StringRef text,
                                          std::string &error, Position &where) {
  Reader reader(text);
  std::unique_ptr<Element> root;
  if (reader.skipMisc()) {
    if (reader.atEnd())
      reader.fail(reader.position(), "the file holds no element");
    else if ((root = reader.element()) && reader.skipMisc() &&
             !reader.atEnd()) {
      reader.fail(reader.position(),
                  "more after the root element <" + root->name + ">");
      root.reset();
    }
  }
  if (!root || !reader.error.empty()) {
    error = reader.error;
    where = reader.where;
    return nullptr;
  }
  return root;
}
