/**
 * Streams the rows of a tab-separated file as pandas writes and reads it (`DataFrame.to_csv(sep='\t')`
 * / `read_csv(sep='\t')`, the form VLMEvalKit ships its benchmarks in), or with `separator` ','
 * a CSV file in the same dialect (RFC 4180, what pandas and Python's csv module write, e.g. an
 * ImageFolder `metadata.csv`): a field holding the separator, a newline or a double quote is wrapped
 * in double quotes, with each quote doubled inside; a row ends at a newline outside quotes (`\r\n`
 * too). Chunk boundaries may fall anywhere, in a quoted field or between `\r` and `\n`.
 */
export async function* tsvRows(stream: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, separator: '\t' | ',' = '\t'): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8');
  let row: string[] = [];
  let field = '';
  let quoted = false;
  /** In a quoted field, a quote seen: either the closing quote or the first of a doubled one. */
  let quoteSeen = false;
  let atFieldStart = true;
  const endField = () => {
    row.push(field);
    field = '';
    atFieldStart = true;
  };
  for await (const chunk of stream) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (quoted) {
        if (quoteSeen) {
          quoteSeen = false;
          if (ch === '"') {
            field += '"';
            continue;
          }
          quoted = false; // that quote closed the field: this character is read unquoted below
        } else if (ch === '"') {
          quoteSeen = true;
          continue;
        } else {
          field += ch;
          continue;
        }
      }
      if (ch === '"' && atFieldStart) {
        quoted = true;
        atFieldStart = false;
      } else if (ch === separator) endField();
      else if (ch === '\n') {
        if (field.endsWith('\r')) field = field.slice(0, -1);
        endField();
        yield row;
        row = [];
      } else {
        field += ch;
        atFieldStart = false;
      }
    }
  }
  field += decoder.decode();
  if (field !== '' || row.length > 0) {
    endField();
    yield row;
  }
}
