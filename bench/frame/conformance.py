# Files as real writers make them (pyarrow, DuckDB, Polars, pandas), each
# with DuckDB's answers on it, for bench/frame/conformance.js to compare
# spillway's frames against. Usage: python conformance.py OUTDIR
# Writes OUTDIR/*.{parquet,csv,ndjson} and OUTDIR/manifest.json.
import datetime, decimal, json, os, sys
import duckdb, pyarrow as pa, pyarrow.parquet as pq

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
files = []  # (name, kind)
N = 300
base = datetime.datetime(2026, 1, 1, 12, 0, 0)

def ids(n=N): return pa.array(range(n), pa.int64())
def groups(n=N): return pa.array([f'g{i % 7}' for i in range(n)])

def pa_write(name, cols, **kw):
    t = pa.table({'id': ids(), 'g': groups(), **cols})
    pq.write_table(t, f'{out}/{name}.parquet', **kw)
    files.append((f'{name}.parquet', 'parquet'))

# codecs
for c in ['snappy', 'zstd', 'gzip', 'lz4', 'brotli', 'none']:
    pa_write(f'pa-codec-{c}', {'x': pa.array([i / 4 for i in range(N)])}, compression=c, row_group_size=100)
nul = lambda f: [None if i % 5 == 0 else f(i) for i in range(N)]
pa_write('pa-dict', {'s': pa.array(nul(lambda i: f'cat{i % 3}')).dictionary_encode()}, use_dictionary=True)
pa_write('pa-large-string', {'s': pa.array(nul(lambda i: f'L{i}'), pa.large_string()), 'b': pa.array(nul(lambda i: b'x' * (i % 4)), pa.large_binary())})
try:
    pa_write('pa-string-view', {'s': pa.array(nul(lambda i: f'view-string-{i}-long-enough'), pa.string_view()), 'b': pa.array(nul(lambda i: b'y' * (i % 20)), pa.binary_view())})
except Exception as e: print('string_view not written:', e)
pa_write('pa-int96', {'ts': pa.array(nul(lambda i: base + datetime.timedelta(seconds=37 * i, microseconds=i)), pa.timestamp('us'))}, use_deprecated_int96_timestamps=True)
for u in ['ms', 'us', 'ns']:
    pa_write(f'pa-ts-{u}', {'ts': pa.array(nul(lambda i: base + datetime.timedelta(seconds=37 * i)), pa.timestamp(u)),
                             'tz': pa.array(nul(lambda i: base + datetime.timedelta(seconds=41 * i)), pa.timestamp(u, tz='UTC')),
                             'tzny': pa.array(nul(lambda i: base + datetime.timedelta(seconds=43 * i)), pa.timestamp(u, tz='America/New_York'))})
pa_write('pa-ts-s', {'ts': pa.array(nul(lambda i: base + datetime.timedelta(seconds=37 * i)), pa.timestamp('s'))})
pa_write('pa-date-time', {'d': pa.array(nul(lambda i: datetime.date(2026, 1, 1) + datetime.timedelta(days=i)), pa.date32()),
                          't64': pa.array(nul(lambda i: datetime.time(i % 24, i % 60, 1, 250)), pa.time64('us')),
                          't32': pa.array(nul(lambda i: datetime.time(i % 24, i % 60, 1, 250000)), pa.time32('ms'))})
pa_write('pa-date64', {'d': pa.array(nul(lambda i: datetime.date(2026, 1, 1) + datetime.timedelta(days=i)), pa.date64())})
pa_write('pa-decimal', {'d38': pa.array(nul(lambda i: decimal.Decimal(i * 12345) / decimal.Decimal(10**10) + 1000000), pa.decimal128(38, 10)),
                        'd5': pa.array(nul(lambda i: decimal.Decimal(i) / 100), pa.decimal128(5, 2)),
                        'd18': pa.array(nul(lambda i: decimal.Decimal(i * 7) / 1000), pa.decimal128(18, 3))})
pa_write('pa-ints', {'b': pa.array(nul(lambda i: i % 2 == 0), pa.bool_()),
                     'i8': pa.array(nul(lambda i: i % 100 - 50), pa.int8()), 'i16': pa.array(nul(lambda i: i * 10 - 1000), pa.int16()),
                     'u8': pa.array(nul(lambda i: i % 250), pa.uint8()), 'u16': pa.array(nul(lambda i: i * 200), pa.uint16()),
                     'u32': pa.array(nul(lambda i: 4_000_000_000 + i), pa.uint32()), 'u64': pa.array(nul(lambda i: 2**63 + i), pa.uint64()),
                     'f32': pa.array(nul(lambda i: i / 8), pa.float32())})
try:
    import numpy as np
    pa_write('pa-float16', {'h': pa.array(np.array([i / 4 for i in range(N)], dtype=np.float16), pa.float16())})
except Exception as e: print('float16 not written:', e)
pa_write('pa-binary', {'bin': pa.array(nul(lambda i: bytes([i % 256, 0, 255])), pa.binary()), 'fsb': pa.array(nul(lambda i: bytes([i % 256]) * 4), pa.binary(4))})
pa_write('pa-nested', {'li': pa.array(nul(lambda i: [i, i + 1] if i % 3 else []), pa.list_(pa.int64())),
                       'ls': pa.array(nul(lambda i: [f'a{i}', None]), pa.list_(pa.string())),
                       'st': pa.array(nul(lambda i: {'a': i, 'b': f's{i}'}), pa.struct([('a', pa.int32()), ('b', pa.string())]))})
pa_write('pa-map', {'m': pa.array(nul(lambda i: [('k', i), ('j', i * 2)]), pa.map_(pa.string(), pa.int32()))})
pa_write('pa-all-null', {'n': pa.nulls(N, pa.int64()), 'ns': pa.nulls(N, pa.string()), 'nn': pa.nulls(N)})
pq.write_table(pa.table({'id': pa.array([], pa.int64()), 'g': pa.array([], pa.string()), 'x': pa.array([], pa.float64())}), f'{out}/pa-zero-rows.parquet'); files.append(('pa-zero-rows.parquet', 'parquet'))
pa_write('pa-tiny-rg', {'x': pa.array([i / 4 for i in range(N)])}, row_group_size=7)
pa_write('pa-tiny-rg1', {'x': pa.array([i / 4 for i in range(N)])}, row_group_size=1)
pa_write('pa-no-stats', {'x': pa.array([i / 4 for i in range(N)])}, write_statistics=False, write_page_index=False, row_group_size=50)
pa_write('pa-page-index', {'x': pa.array([i / 4 for i in range(N)])}, write_page_index=True, data_page_size=64, row_group_size=150)
pa_write('pa-v2', {'x': pa.array([i / 4 for i in range(N)]), 's': pa.array(nul(lambda i: f'v{i % 9}'))}, data_page_version='2.0', row_group_size=100)

# DuckDB
con = duckdb.connect()
con.execute(f"""COPY (SELECT i::BIGINT AS id, 'g' || (i % 7) AS g, (i::HUGEINT * 1000000000000) AS hi, 
  ('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID AS u, INTERVAL (i) MINUTE AS iv,
  (['a','b','c'][1 + i % 3])::ENUM('a','b','c') AS e, (i / 100)::DECIMAL(12,2) AS dec, (i / 3)::DECIMAL(38,10) AS dec38,
  [i, i+1] AS li, {{'x': i, 'y': 'v' || i}} AS st, MAP {{'k': i}} AS mp, TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS ts,
  TIMESTAMPTZ '2026-01-01 00:00:00+00' + INTERVAL (i) SECOND AS tstz, DATE '2026-01-01' + i::INTEGER AS d, TIME '01:02:03' + INTERVAL (i) SECOND AS t,
  CASE WHEN i % 4 = 0 THEN NULL ELSE i * 1.5 END AS x, i % 2 = 0 AS b, (i % 200)::UTINYINT AS ut
  FROM range({N}) r(i)) TO '{out}/duck-types.parquet' (FORMAT parquet, COMPRESSION zstd)""")
files.append(('duck-types.parquet', 'parquet'))
for c in ['snappy', 'zstd', 'gzip', 'lz4', 'brotli', 'uncompressed']:
    con.execute(f"COPY (SELECT i::BIGINT AS id, 'g' || (i % 7) AS g, i / 4 AS x FROM range({N}) r(i)) TO '{out}/duck-{c}.parquet' (FORMAT parquet, COMPRESSION {c}, ROW_GROUP_SIZE 64)")
    files.append((f'duck-{c}.parquet', 'parquet'))
con.execute(f"COPY (SELECT i::BIGINT AS id, 'g' || (i % 7) AS g, i / 4 AS x FROM range({N}) r(i)) TO '{out}/duck-v2.parquet' (FORMAT parquet, PARQUET_VERSION V2)")
files.append(('duck-v2.parquet', 'parquet'))

# Polars
try:
    import polars as pl
    df = pl.DataFrame({'id': list(range(N)), 'g': [f'g{i % 7}' for i in range(N)], 'x': [None if i % 5 == 0 else i / 4 for i in range(N)],
                       's': [f'str{i}' for i in range(N)], 'cat': pl.Series([f'c{i % 3}' for i in range(N)], dtype=pl.Categorical),
                       'ts': [base + datetime.timedelta(seconds=i) for i in range(N)], 'd': [datetime.date(2026, 1, 1) + datetime.timedelta(days=i) for i in range(N)],
                       'li': [[i, i] for i in range(N)], 'dec': pl.Series([decimal.Decimal(i) / 100 for i in range(N)], dtype=pl.Decimal(10, 2)),
                       'u32': pl.Series(list(range(N)), dtype=pl.UInt32), 'st': [{'a': i, 'b': str(i)} for i in range(N)]})
    df.write_parquet(f'{out}/polars-default.parquet'); files.append(('polars-default.parquet', 'parquet'))
    df.write_parquet(f'{out}/polars-lz4-nostats.parquet', compression='lz4', statistics=False, row_group_size=50); files.append(('polars-lz4-nostats.parquet', 'parquet'))
    df.write_parquet(f'{out}/polars-uncompressed.parquet', compression='uncompressed'); files.append(('polars-uncompressed.parquet', 'parquet'))
except ImportError as e: print('no polars', e)

# CSV as pandas, DuckDB, Excel and hand-made exports write it
import pandas as pd, numpy as np
def text(name, s, mode='w'):
    with open(f'{out}/{name}', 'wb') as fh: fh.write(s.encode('utf-8') if isinstance(s, str) else s)
    files.append((name, name.rsplit('.', 1)[1]))
pdf = pd.DataFrame({'id': range(N), 'g': [f'g{i % 7}' for i in range(N)], 'x': [np.nan if i % 5 == 0 else i / 4 for i in range(N)],
                    'q': [f'say "hi", {i}' if i % 3 == 0 else f'plain{i}' for i in range(N)], 'flag': [i % 2 == 0 for i in range(N)],
                    'when': pd.date_range('2026-01-01', periods=N, freq='h')})
pdf.to_csv(f'{out}/pandas-index.csv'); files.append(('pandas-index.csv', 'csv'))
pdf.to_csv(f'{out}/pandas-noindex.csv', index=False); files.append(('pandas-noindex.csv', 'csv'))
pdf.assign(when=pdf.when.dt.tz_localize('UTC')).to_csv(f'{out}/pandas-tz.csv', index=False); files.append(('pandas-tz.csv', 'csv'))
con.register('pdf', pdf)
con.execute(f"COPY pdf TO '{out}/duck.csv' (HEADER, DELIMITER ',')"); files.append(('duck.csv', 'csv'))
con.execute(f"COPY (SELECT * FROM pdf) TO '{out}/duck-quoted.csv' (HEADER, FORCE_QUOTE *)"); files.append(('duck-quoted.csv', 'csv'))
rows = [f'{i};g{i % 7};{i / 4:.2f}'.replace('.', ',') for i in range(N)]
text('excel.csv', '\ufeffid;g;x\r\n' + '\r\n'.join(rows) + '\r\n')
text('bom-comma.csv', '\ufeffid,g,x\r\n' + '\r\n'.join(f'{i},g{i % 7},{i / 4}' for i in range(N)) + '\r\n')
text('no-trailing-newline.csv', 'id,g,x\n' + '\n'.join(f'{i},g{i % 7},{i / 4}' for i in range(N)))
text('trailing-blank.csv', 'id,g,x\n' + '\n'.join(f'{i},g{i % 7},{i / 4}' for i in range(N)) + '\n\n')
text('header-only.csv', 'id,g,x\n')
text('zip-thousands.csv', 'id,g,zip,amount\n' + '\n'.join(f'{i},g{i % 7},{i * 37 % 100000:05d},"{i * 1234:,}"' for i in range(N)) + '\n')
text('dates.csv', 'id,g,d,ts,tstz\n' + '\n'.join(f'{i},g{i % 7},2026-01-{1 + i % 28:02d},2026-01-01T{i % 24:02d}:{i % 60:02d}:00,2026-01-01 {i % 24:02d}:00:00+0{i % 3}:00' for i in range(N)) + '\n')
text('bools.csv', 'id,g,a,b,c\n' + '\n'.join(f'{i},g{i % 7},{"True" if i % 2 else "False"},{"true" if i % 3 else "false"},{["TRUE", "FALSE", ""][i % 3]}' for i in range(N)) + '\n')
text('wide.csv', ','.join(['id', 'g'] + [f'c{j}' for j in range(200)]) + '\n' + '\n'.join(','.join([str(i), f'g{i % 7}'] + [str(i * j) for j in range(200)]) for i in range(N)) + '\n')
text('long-value.csv', 'id,g,big\n' + '\n'.join(f'{i},g{i % 7},{("v" * 1_000_000) if i == 5 else "s" + str(i)}' for i in range(N)) + '\n')
text('na-values.csv', 'id,g,x\n' + '\n'.join(f'{i},g{i % 7},{["", "NA", "1.5", "2"][i % 4]}' for i in range(N)) + '\n')
# NDJSON
pdf.to_json(f'{out}/pandas.ndjson', orient='records', lines=True); files.append(('pandas.ndjson', 'ndjson'))
con.execute(f"COPY (SELECT *, {{'a': id, 'b': [id, id]}} AS nest FROM pdf) TO '{out}/duck.ndjson' (FORMAT json)"); files.append(('duck.ndjson', 'ndjson'))
import json as _j
def nd(i):
    r = {'id': i, 'g': f'g{i % 7}', 'x': i if i % 2 else i + 0.5, 'nest': {'a': i, 'b': [i, None]}, 'arr': [i, i + 1], 'maybe': None if i % 3 == 0 else f'm{i}'}
    if i % 4 == 0: r.pop('maybe')
    if i % 2: r = dict(reversed(list(r.items())))
    return _j.dumps(r)
text('mixed.ndjson', '\n'.join(nd(i) for i in range(N)) + '\n\n')
text('crlf.ndjson', '\r\n'.join(nd(i) for i in range(N)) + '\r\n')
text('no-trailing.ndjson', '\n'.join(nd(i) for i in range(N)))

json.dump({'files': files}, open(f'{out}/manifest-files.json', 'w'))
# DuckDB's answers
ans = {}
for name, kind in files:
    path = f'{out}/{name}'
    rel = f"read_parquet('{path}')" if kind == 'parquet' else (f"read_csv('{path}')" if kind == 'csv' else f"read_json('{path}')")
    try:
        cols = con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()
        a = {'count': con.execute(f'SELECT count(*) FROM {rel}').fetchone()[0], 'columns': {}}
        for cname, ctype, *_ in cols:
            q = f'"{cname}"'
            c = {'type': ctype, 'nonnull': con.execute(f'SELECT count({q}) FROM {rel}').fetchone()[0]}
            try: c['distinct'] = con.execute(f'SELECT count(DISTINCT {q}) FROM {rel}').fetchone()[0]
            except Exception: pass
            try: c['text'] = [None if v is None else v for (v,) in con.execute(f'SELECT {q}::VARCHAR FROM {rel} LIMIT 3 OFFSET 1').fetchall()]
            except Exception: pass
            if ctype.split('(')[0] in ('TINYINT','SMALLINT','INTEGER','BIGINT','HUGEINT','UTINYINT','USMALLINT','UINTEGER','UBIGINT','DOUBLE','FLOAT','DECIMAL'):
                c['sum'] = float(con.execute(f'SELECT sum({q})::DOUBLE FROM {rel}').fetchone()[0] or 0)
            if ctype.startswith('TIMESTAMP'):
                c['epoch_us'] = con.execute(f'SELECT min(epoch_us({q}::TIMESTAMP)), max(epoch_us({q}::TIMESTAMP)) FROM {rel}').fetchone()
            if ctype == 'DATE':
                c['days'] = con.execute(f"SELECT min({q} - DATE '1970-01-01'), max({q} - DATE '1970-01-01') FROM {rel}").fetchone()
            a['columns'][cname] = c
        if 'id' in a['columns'] and 'g' in a['columns']:
            a['filter'] = con.execute(f'SELECT count(*) FROM {rel} WHERE id > 100').fetchone()[0]
            a['groups'] = dict(con.execute(f'SELECT g, sum(id)::DOUBLE FROM {rel} GROUP BY g').fetchall())
        ans[name] = a
    except Exception as e:
        ans[name] = {'error': str(e)}
json.dump(ans, open(f'{out}/manifest.json', 'w'), default=str, indent=1)
print(len(files), 'files')
