/** Table, value and sorted output, as scripts read them. */
import {describe, expect, it} from 'vitest'
import {
  csvLines,
  csvRecord,
  outputMisfit,
  pickColumns,
  pickedRows,
  fittedWidths,
  wrapCell,
  recordValue,
  visible,
  sortRows,
  table,
  valueCell,
  valueLines,
  DOCUMENT,
  SENTENCES,
  type Column,
} from '../../src/cli/output.js'

interface Row {
  name: string
  used: number
}
const rows: Row[] = [
  {name: 'cn10', used: 2},
  {name: 'cn2', used: 10},
  {name: 'cn1', used: 2},
]
const cols: Column<Row>[] = [{key: 'name'}, {key: 'used', align: 'right'}]

describe('output for scripts', () => {
  it('sorts by columns, numbers as numbers, names naturally, stably', () => {
    expect(sortRows(rows, cols, ['used']).map((r) => r.name)).toEqual(['cn10', 'cn1', 'cn2'])
    expect(sortRows(rows, cols, ['USED', 'name']).map((r) => r.name)).toEqual(['cn1', 'cn10', 'cn2'])
    expect(sortRows(rows, cols, ['name']).map((r) => r.name)).toEqual(['cn1', 'cn2', 'cn10'])
    expect(() => sortRows(rows, cols, ['nope'])).toThrow(/unknown column/)
  })
  it('-f value: cells separated by one space, no header; --no-headers keeps the padding', () => {
    expect(valueLines(rows, cols, {only: ['used', 'name'], sortBy: ['name']})).toBe('2 cn1\n10 cn2\n2 cn10')
    expect(table(rows, cols, {headers: false})).toBe('cn10   2\ncn2   10\ncn1    2')
  })
  it('output flags checked against what a command prints: its columns, its keys, or sentences', () => {
    const list = {columns: [{key: 'uuid'}, {key: 'name', header: 'host'}]}
    const record = {keys: ['consumer', 'consumer_uuid']}
    expect(outputMisfit(list, {columns: ['HOST', 'uuid'], sortBy: ['name'], ids: true}, 'x')).toBeNull()
    expect(outputMisfit(list, {columns: ['bogus']}, 'x')).toBe('unknown column(s): bogus; choose from uuid, name')
    expect(outputMisfit(list, {sortBy: ['bogus']}, 'x')).toMatch(/^unknown column\(s\): bogus/)
    expect(outputMisfit({columns: [{key: 'name'}]}, {ids: true}, 'x')).toBe('--ids: this list has no uuid column')
    expect(outputMisfit(record, {columns: ['consumer_uuid']}, 'x')).toBeNull()
    expect(outputMisfit(record, {sortBy: ['consumer']}, 'placemat claim')).toBe('--sort-column: placemat claim prints no table')
    expect(outputMisfit(record, {ids: true}, 'placemat claim')).toBe('--ids: placemat claim prints no list')
    expect(outputMisfit(SENTENCES, {columns: ['name']}, 'placemat host disable')).toBe(
      '-c: placemat host disable prints no columns or keys (--json or --yaml print its document)',
    )
    expect(outputMisfit(SENTENCES, {columns: []}, 'x')).toBeNull()
  })
  it('-f value: no cell holds whitespace, so each line splits into the columns asked for', () => {
    expect(valueCell('cn-01_numa0: VCPU=4,MEMORY_MB=8192; ceph-1: DISK_GB=40')).toBe('cn-01_numa0:VCPU=4,MEMORY_MB=8192;ceph-1:DISK_GB=40')
    expect(valueCell('rack k1')).toBe('rack_k1')
    expect(valueCell('cannot  move\tnow ')).toBe('cannot_move_now')
    expect(valueCell('')).toBe('')
    const spaced = [{name: 'a: x; b: y', used: 1}]
    expect(valueLines(spaced, cols)).toBe('a:x;b:y 1')
    expect(table(spaced, cols)).toBe('NAME        USED\na: x; b: y     1')
  })
  it('-f value: an empty cell prints None (what osc-placement prints for a null), so every line has every column', () => {
    const sparse = [
      {name: 'root', parent: null, used: 1},
      {name: 'child', parent: 'root', used: undefined},
      {name: '', parent: 'root', used: 0},
    ]
    const columns = [{key: 'name'}, {key: 'parent', get: (r: (typeof sparse)[number]) => r.parent ?? ''}, {key: 'used'}]
    expect(valueLines(sparse, columns)).toBe('root None 1\nchild root None\nNone root 0')
    for (const line of valueLines(sparse, columns).split('\n')) expect(line.split(' ')).toHaveLength(3)
    expect(recordValue(null)).toBe('None')
    expect(recordValue(undefined)).toBe('None')
    expect(recordValue('')).toBe('')
    expect(recordValue(['a'])).toBe('["a"]')
  })
  it('a document (export, topology layout) takes no -c, --ids, --sort-column or --no-headers; sentences no --no-headers', () => {
    expect(outputMisfit(DOCUMENT, {columns: ['foo']}, 'placemat export')).toBe(
      '-c: placemat export prints a document, with no columns or keys to pick',
    )
    expect(outputMisfit(DOCUMENT, {ids: true}, 'placemat export')).toBe('--ids: placemat export prints no list')
    expect(outputMisfit(DOCUMENT, {sortBy: ['name']}, 'placemat export')).toBe('--sort-column: placemat export prints no table')
    expect(outputMisfit(DOCUMENT, {noHeaders: true}, 'placemat export')).toBe('--no-headers: placemat export prints no table')
    expect(outputMisfit(DOCUMENT, {}, 'placemat export')).toBeNull()
    expect(outputMisfit(SENTENCES, {noHeaders: true}, 'placemat apply')).toBe('--no-headers: placemat apply prints no table')
    expect(outputMisfit({keys: ['uuid']}, {noHeaders: true}, 'x')).toBeNull()
  })
})

describe('-f csv', () => {
  const columns: Column<{name: string; used: number; parent: string | null}>[] = [
    {key: 'name'},
    {key: 'used', header: 'USED NOW'},
    {key: 'parent'},
  ]
  const rows = [
    {name: 'cn "1", east', used: 3, parent: null},
    {name: 'cn2', used: 0, parent: 'cn1'},
  ]
  it('prints the header, then each row: numbers bare, text quoted with quotes doubled, nothing as an empty text', () => {
    expect(csvLines(rows, columns)).toBe('"name","USED NOW","parent"\n"cn ""1"", east",3,""\n"cn2",0,"cn1"')
    expect(csvLines(rows, columns, {only: ['parent', 'name'], headers: false, sortBy: ['name']})).toBe('"","cn ""1"", east"\n"cn1","cn2"')
  })
  it('prints a record as its keys, then its values', () => {
    expect(csvRecord({name: 'cn1', generation: 2, traits: ['A', 'B']})).toBe('"name","generation","traits"\n"cn1",2,"[""A"",""B""]"')
  })
})

describe("osc's -c", () => {
  const columns: Column<{uuid: string; root_provider_uuid: string | null}>[] = [
    {key: 'uuid'},
    {key: 'root', aliases: ['root_provider_uuid'], get: (r) => r.root_provider_uuid ?? ''},
  ]
  const rows = [
    {uuid: 'b', root_provider_uuid: 'r'},
    {uuid: 'a', root_provider_uuid: null},
  ]

  it("takes a column by its key, its header or osc's name for it (its JSON key)", () => {
    expect(pickColumns(columns, ['root_provider_uuid', 'UUID'])).toEqual(['root', 'uuid'])
    expect(() => pickColumns(columns, ['parent_provider_uuid'])).toThrow('unknown column(s): parent_provider_uuid')
  })

  it('with -f json or yaml, prints the rows holding only the columns asked for, under the names asked by', () => {
    expect(pickedRows(rows, columns, ['uuid', 'root_provider_uuid'], ['uuid'])).toEqual([
      {uuid: 'a', root_provider_uuid: ''},
      {uuid: 'b', root_provider_uuid: 'r'},
    ])
  })
})

describe('table widths', () => {
  it('count what a terminal shows: a CJK character two columns, a combining mark none, colour nothing', () => {
    expect([visible('cn1'), visible('計算ノード'), visible('e\u0301'), visible('\x1b[1mab\x1b[0m')]).toEqual([3, 10, 1, 2])
    expect(
      table(
        [
          {name: '計算', used: 1},
          {name: 'cn-1', used: 22},
        ],
        [{key: 'name'}, {key: 'used', align: 'right'}],
      ).split('\n'),
    ).toEqual(['NAME  USED', '計算     1', 'cn-1    22'])
  })
})

describe("osc's --max-width and --fit-width", () => {
  it('narrows the widest columns first, never below their header (up to 12), and wraps their cells', () => {
    expect(fittedWidths([36, 10, 40], [4, 4, 9], 60)).toEqual([23, 10, 23])
    expect(fittedWidths([36, 10, 40], [4, 4, 9], 200)).toEqual([36, 10, 40])
    expect(fittedWidths([36, 10], [4, 4], 5)).toEqual([4, 4]) // cannot fit: as narrow as the headers
    expect(wrapCell('cn1: VCPU=4; ceph-1: DISK_GB=40', 14)).toEqual(['cn1: VCPU=4;', 'ceph-1:', 'DISK_GB=40'])
    expect(wrapCell('0123456789abcdef', 6)).toEqual(['012345', '6789ab', 'cdef'])
  })

  it('gives a table no line wider than asked, every cell whole over its lines', () => {
    const rows = [{name: 'a-very-long-provider-name-that-runs-on', used: 1}]
    const text = table(rows, [{key: 'name'}, {key: 'used', align: 'right'}], {maxWidth: 20})
    expect(text.split('\n').every((l) => visible(l) <= 20)).toBe(true)
    expect(
      text
        .split('\n')
        .slice(1)
        .map((l) => l.slice(0, 14).trim())
        .join(''),
    ).toBe('a-very-long-provider-name-that-runs-on')
  })
})
