//===- JsonReader.cpp - JSON with the position of every value -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "JsonReader.h"

#include "llvm/ADT/StringExtras.h"

using namespace sdma::json;

const Value *Value::find(llvm::StringRef key) const {
  if (kind != Object)
    return nullptr;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i].first == key)
      return &items[i];
  return nullptr;
}

std::optional<int64_t> Value::integer() const {
  int64_t v = 0;
  if (kind != Number || llvm::StringRef(text).getAsInteger(10, v))
    return std::nullopt;
  return v;
}

const char *Value::describe() const {
  static const char *names[] = {"null",     "a boolean", "a number",
                                "a string", "an array",  "an object"};
  return names[kind];
}

namespace {

class Reader {
public:
  explicit Reader(llvm::StringRef text) : text_(text) {}

  std::optional<Value> document() {
    std::optional<Value> v = value(0);
    if (!v)
      return std::nullopt;
    space();
    if (pos_ < text_.size())
      return fail("more after the document's value");
    return v;
  }

  std::string error;
  Position where;

private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void advance() {
    if (pos_ >= text_.size())
      return;
    if (text_[pos_++] == '\n') {
      ++at_.line;
      at_.column = 1;
    } else {
      ++at_.column;
    }
  }
  void space() {
    while (pos_ < text_.size() && (peek() == ' ' || peek() == '\t' ||
                                   peek() == '\n' || peek() == '\r'))
      advance();
  }
  std::nullopt_t fail(std::string message) {
    if (error.empty()) {
      error = std::move(message);
      where = at_;
    }
    return std::nullopt;
  }
  bool literal(llvm::StringRef word) {
    if (!text_.substr(pos_).starts_with(word))
      return false;
    for (size_t i = 0; i < word.size(); ++i)
      advance();
    return true;
  }

  std::optional<std::string> string() {
    advance(); // the opening quote
    std::string out;
    for (;;) {
      if (pos_ >= text_.size())
        return fail("a string is not closed");
      char c = peek();
      if (c == '"') {
        advance();
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("a control character inside a string");
      advance();
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      char e = peek();
      advance();
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        unsigned code = 0;
        if (pos_ + 4 > text_.size() ||
            text_.substr(pos_, 4).getAsInteger(16, code))
          return fail("\\u needs four hexadecimal digits");
        for (int i = 0; i < 4; ++i)
          advance();
        if (code < 0x80) {
          out.push_back(char(code));
        } else if (code < 0x800) {
          out.push_back(char(0xC0 | (code >> 6)));
          out.push_back(char(0x80 | (code & 0x3F)));
        } else {
          out.push_back(char(0xE0 | (code >> 12)));
          out.push_back(char(0x80 | ((code >> 6) & 0x3F)));
          out.push_back(char(0x80 | (code & 0x3F)));
        }
        break;
      }
      default:
        return fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::optional<Value> value(int depth) {
    if (depth > 256)
      return fail("nested more than 256 deep");
    space();
    Value v;
    v.at = at_;
    char c = peek();
    if (c == '{' || c == '[') {
      bool object = c == '{';
      v.kind = object ? Value::Object : Value::Array;
      advance();
      space();
      if (peek() == (object ? '}' : ']')) {
        advance();
        return v;
      }
      for (;;) {
        space();
        if (object) {
          if (peek() != '"')
            return fail("expected a member name (a string)");
          Position keyAt = at_;
          std::optional<std::string> key = string();
          if (!key)
            return std::nullopt;
          for (auto &[k, p] : v.keys)
            if (k == *key) {
              where = keyAt;
              error = "member \"" + *key + "\" appears twice (first at " +
                      std::to_string(p.line) + ":" + std::to_string(p.column) +
                      ")";
              return std::nullopt;
            }
          v.keys.push_back({*key, keyAt});
          space();
          if (peek() != ':')
            return fail("expected ':' after member \"" + *key + "\"");
          advance();
        }
        std::optional<Value> item = value(depth + 1);
        if (!item)
          return std::nullopt;
        v.items.push_back(std::move(*item));
        space();
        if (peek() == ',') {
          advance();
          continue;
        }
        if (peek() == (object ? '}' : ']')) {
          advance();
          return v;
        }
        return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Value::String;
      std::optional<std::string> s = string();
      if (!s)
        return std::nullopt;
      v.text = std::move(*s);
      return v;
    }
    if (literal("true") || literal("false")) {
      v.kind = Value::Bool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return v;
    }
    if (literal("null"))
      return v;
    if (c == '-' || llvm::isDigit(c)) {
      v.kind = Value::Number;
      size_t start = pos_;
      while (pos_ < text_.size() && (llvm::isDigit(peek()) ||
                                     llvm::StringRef("+-.eE").contains(peek())))
        advance();
      v.text = text_.slice(start, pos_).str();
      return v;
    }
    return fail(pos_ >= text_.size() ? "the document ends early"
                                     : std::string("unexpected '") + c + "'");
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
  Position at_;
};

} // namespace

std::optional<Value> sdma::json::parse(llvm::StringRef text, std::string &error,
                                       Position &where) {
  Reader reader(text);
  std::optional<Value> v = reader.document();
  if (!v) {
    error = reader.error;
    where = reader.where;
  }
  return v;
}
