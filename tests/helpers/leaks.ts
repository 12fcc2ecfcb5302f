// What in an answer to a caller would mean the server leaked its insides: a stack frame, a source
// line, an engine error's name, a dependency's path, SQLite's error codes, or a file from outside the
// vault (/etc/passwd's first line). The sweeps of every tool and every web route check each answer.
const LEAKS = [/\bat [\w.<>]+ \(.*:\d+:\d+\)/, /\.ts:\d+/, /\b(TypeError|ReferenceError|RangeError): /, /node_modules\//, /SQLITE_/, /root:x:0:0/];

/** The first leak pattern `text` matches, or undefined. */
export function leakIn(text: string): RegExp | undefined {
  return LEAKS.find((re) => re.test(text));
}
