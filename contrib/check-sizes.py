#!/usr/bin/env python3
"""The house's sizes: no product file over 800 lines, no class or struct
over 40 members (data and functions, each declaration one member; nested
types count once, their own members apart).

  contrib/check-sizes.py [TOP]

The product is ucx_ext/, src/ and toolchain/ (tests and examples aside).
Exempt: what contrib/rooms.txt's sizes section names (a file that another
piece of work replaces whole). The class count reads the source the way a
reviewer does, not the way a compiler does: a declaration is what ends in
';' or in a function body at the class's own brace depth, after comments,
strings and preprocessor lines are taken out; access labels, friends,
using-declarations and static_asserts are not members. Exits 1 and names
each offender; prints one line on success.
"""
import os
import re
import sys

MAX_LINES = 800
MAX_MEMBERS = 40
BASES = ('ucx_ext', 'src', 'toolchain')
SUFFIXES = ('.c', '.h', '.cpp', '.hpp', '.inl')
SKIP_DIRS = ('toolchain/test', 'toolchain/examples')

COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
PREPROC = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
HEAD = re.compile(r'\b(class|struct)\s+(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)'
                  r'(?:\s+final)?\s*(?::[^{;()]*)?\{')
NOT_MEMBER = re.compile(r'^\s*(?:(?:public|private|protected)\s*:|friend\b|using\b|'
                        r'static_assert\b|typedef\b|;)')


def strip(text):
    text = COMMENT.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
    text = STRING.sub('""', text)
    return PREPROC.sub('', text)


def body_end(text, open_at):
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                return i
    return len(text)


FUNCTION_BODY = re.compile(r'(\)|\}|\b(?:const|noexcept|override|final|mutable|default))\s*$')
NESTED_TYPE = re.compile(r'^\s*(?:template\s*<[^{]*>\s*)?(?:class|struct|union|enum)\b')


def count_members(body):
    """Declarations at depth 0 of a class body: each ends at a ';' or at a
    function body; a brace initializer does not end one, a nested type's
    body is skipped."""
    members, paren, start, i = 0, 0, 0, 0
    while i < len(body):
        c = body[i]
        if c == '(':
            paren += 1
        elif c == ')':
            paren -= 1
        elif c == '{' and paren == 0:
            decl = body[start:i]
            i = body_end(body, i)
            if NESTED_TYPE.match(decl) or not FUNCTION_BODY.search(decl):
                pass                    # runs on to its ';'
            else:
                if not NOT_MEMBER.match(decl):
                    members += 1
                start = i + 1
        elif c == ';' and paren == 0:
            decl = body[start:i]
            if decl.strip() and not NOT_MEMBER.match(decl):
                members += 1
            start = i + 1
        elif c == ':' and paren == 0:
            if re.match(r'\s*(public|private|protected)\s*$', body[start:i]):
                start = i + 1
        i += 1
    return members


def classes(text):
    for m in HEAD.finditer(text):
        open_at = m.end() - 1
        end = body_end(text, open_at)
        yield m.group(2), text.count('\n', 0, m.start()) + 1, count_members(text[open_at + 1:end])


def exempt_list(top):
    out, on = set(), False
    with open(os.path.join(top, 'contrib', 'rooms.txt'), encoding='utf-8') as f:
        for line in f:
            s = line.split('#', 1)[0].strip()
            if line.startswith('# ---- sizes'):
                on = True
            elif line.startswith('# ----'):
                on = False
            elif on and line.startswith('#   exempt:'):
                out.add(line.split(':', 1)[1].strip())
    return out


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), '..'))
    exempt = exempt_list(top)
    errors, nfiles, nclasses = [], 0, 0
    for base in BASES:
        for d, dirs, names in os.walk(os.path.join(top, base)):
            rel_d = os.path.relpath(d, top)
            if rel_d.startswith(SKIP_DIRS):
                dirs[:] = []
                continue
            for n in sorted(names):
                if not n.endswith(SUFFIXES):
                    continue
                rel = os.path.join(rel_d, n)
                if rel in exempt:
                    continue
                nfiles += 1
                with open(os.path.join(top, rel), encoding='utf-8', errors='replace') as h:
                    text = h.read()
                lines = text.count('\n')
                if lines > MAX_LINES:
                    errors.append(f'{rel}: {lines} lines (at most {MAX_LINES})')
                for name, line, members in classes(strip(text)):
                    nclasses += 1
                    if members > MAX_MEMBERS:
                        errors.append(f'{rel}:{line}: {name} has {members} members '
                                      f'(at most {MAX_MEMBERS})')
    if errors:
        print('\n'.join(errors))
        print(f'check-sizes: {len(errors)} problem(s)')
        return 1
    print(f'check-sizes: {nfiles} files of at most {MAX_LINES} lines, {nclasses} classes '
          f'of at most {MAX_MEMBERS} members ({len(exempt)} file(s) exempt)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
