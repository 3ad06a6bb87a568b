// The 22 TPC-H queries in spillway's frame API, written as Polars' PDS-H
// writes them (joins, semi and anti joins for EXISTS and IN, group-bys of
// expressions, when/then for CASE), each beside its SQL for DuckDB. The
// parameters are the specification's validation values.
//
// Not yet idiomatic: decimal columns are cast to float64 before arithmetic
// and comparison (spillway has no decimal arithmetic yet, issue 44), so the
// sums are float64 where DuckDB's are exact decimals; the runner compares
// them to a relative 1e-9.
'use strict'
const { col, lit, when, count, sum, mean, min, max, nUnique } = require('../../dist')

/** A decimal column as float64. */
const f = (c) => col(c).cast('float64')
/** l_extendedprice * (1 - l_discount). */
const disc = () => f('l_extendedprice').multiplyBy(lit(1).minus(f('l_discount')))
const desc = (d) => ({ descending: d })

/** Each query: (tables) => a frame (or a head slice). */
const frames = {
  q1: (t) =>
    t.lineitem
      .filter(col('l_shipdate').ltEq('1998-09-02'))
      .groupBy('l_returnflag', 'l_linestatus')
      .agg({
        sum_qty: sum(f('l_quantity')),
        sum_base_price: sum(f('l_extendedprice')),
        sum_disc_price: sum(disc()),
        sum_charge: sum(disc().multiplyBy(lit(1).plus(f('l_tax')))),
        avg_qty: mean(f('l_quantity')),
        avg_price: mean(f('l_extendedprice')),
        avg_disc: mean(f('l_discount')),
        count_order: count(),
      })
      .sortBy(['l_returnflag', 'l_linestatus']),
  q2: (t) => {
    const europe = t.region
      .filter(col('r_name').eq('EUROPE'))
      .join(t.nation, { leftOn: 'r_regionkey', rightOn: 'n_regionkey' })
      .join(t.supplier, { leftOn: 'n_nationkey', rightOn: 's_nationkey' })
      .join(t.partsupp, { leftOn: 's_suppkey', rightOn: 'ps_suppkey' })
    const j = t.part.filter(col('p_size').eq(15).and(col('p_type').str.endsWith('BRASS'))).join(europe, { leftOn: 'p_partkey', rightOn: 'ps_partkey' })
    const cheapest = j.groupBy('p_partkey').agg({ min_cost: min(f('ps_supplycost')) })
    return j
      .join(cheapest, { on: 'p_partkey' })
      .filter(f('ps_supplycost').eq(col('min_cost')))
      .select(f('s_acctbal').alias('s_acctbal'), col('s_name'), col('n_name'), col('p_partkey'), col('p_mfgr'), col('s_address'), col('s_phone'), col('s_comment'))
      .sortBy(['s_acctbal', 'n_name', 's_name', 'p_partkey'], desc([true, false, false, false]))
      .head(100)
  },
  q3: (t) =>
    t.customer
      .filter(col('c_mktsegment').eq('BUILDING'))
      .join(t.orders.filter(col('o_orderdate').lt('1995-03-15')), { leftOn: 'c_custkey', rightOn: 'o_custkey' })
      .join(t.lineitem.filter(col('l_shipdate').gt('1995-03-15')), { leftOn: 'o_orderkey', rightOn: 'l_orderkey' })
      .groupBy('o_orderkey', 'o_orderdate', 'o_shippriority')
      .agg({ revenue: sum(disc()) })
      .select('o_orderkey', 'revenue', 'o_orderdate', 'o_shippriority')
      .sortBy(['revenue', 'o_orderdate'], desc([true, false]))
      .head(10),
  q4: (t) =>
    t.orders
      .filter(col('o_orderdate').gtEq('1993-07-01').and(col('o_orderdate').lt('1993-10-01')))
      .join(t.lineitem.filter(col('l_commitdate').lt(col('l_receiptdate'))), { leftOn: 'o_orderkey', rightOn: 'l_orderkey', how: 'semi' })
      .groupBy('o_orderpriority')
      .agg({ order_count: count() })
      .sortBy('o_orderpriority'),
  q5: (t) => {
    const asia = t.region.filter(col('r_name').eq('ASIA')).join(t.nation, { leftOn: 'r_regionkey', rightOn: 'n_regionkey' })
    const supp = t.supplier.join(asia, { leftOn: 's_nationkey', rightOn: 'n_nationkey' })
    const ord = t.orders.filter(col('o_orderdate').gtEq('1994-01-01').and(col('o_orderdate').lt('1995-01-01'))).join(t.customer, { leftOn: 'o_custkey', rightOn: 'c_custkey' })
    return t.lineitem
      .join(supp, { leftOn: 'l_suppkey', rightOn: 's_suppkey' })
      .join(ord, { leftOn: ['l_orderkey', 's_nationkey'], rightOn: ['o_orderkey', 'c_nationkey'] })
      .groupBy('n_name')
      .agg({ revenue: sum(disc()) })
      .sortBy('revenue', { descending: true })
  },
  q6: (t) =>
    t.lineitem
      .filter(col('l_shipdate').gtEq('1994-01-01').and(col('l_shipdate').lt('1995-01-01')).and(f('l_discount').isBetween(0.05, 0.07)).and(f('l_quantity').lt(24)))
      .agg({ revenue: sum(f('l_extendedprice').multiplyBy(f('l_discount'))) }),
  q7: (t) => {
    const pair = t.nation.filter(col('n_name').isIn(['FRANCE', 'GERMANY']))
    const supp = t.supplier.join(pair.select(col('n_nationkey'), col('n_name').alias('supp_nation')), { leftOn: 's_nationkey', rightOn: 'n_nationkey' })
    const cust = t.customer.join(pair.select(col('n_nationkey'), col('n_name').alias('cust_nation')), { leftOn: 'c_nationkey', rightOn: 'n_nationkey' })
    return t.lineitem
      .filter(col('l_shipdate').isBetween('1995-01-01', '1996-12-31'))
      .join(supp, { leftOn: 'l_suppkey', rightOn: 's_suppkey' })
      .join(t.orders.join(cust, { leftOn: 'o_custkey', rightOn: 'c_custkey' }), { leftOn: 'l_orderkey', rightOn: 'o_orderkey' })
      .filter(col('supp_nation').neq(col('cust_nation')))
      .withColumns({ l_year: col('l_shipdate').dt.year() })
      .groupBy('supp_nation', 'cust_nation', 'l_year')
      .agg({ revenue: sum(disc()) })
      .sortBy(['supp_nation', 'cust_nation', 'l_year'])
  },
  q8: (t) => {
    const america = t.region.filter(col('r_name').eq('AMERICA')).join(t.nation, { leftOn: 'r_regionkey', rightOn: 'n_regionkey' })
    const cust = t.customer.join(america, { leftOn: 'c_nationkey', rightOn: 'n_nationkey', how: 'semi' })
    const ord = t.orders.filter(col('o_orderdate').isBetween('1995-01-01', '1996-12-31')).join(cust, { leftOn: 'o_custkey', rightOn: 'c_custkey', how: 'semi' })
    return t.lineitem
      .join(t.part.filter(col('p_type').eq('ECONOMY ANODIZED STEEL')), { leftOn: 'l_partkey', rightOn: 'p_partkey', how: 'semi' })
      .join(ord, { leftOn: 'l_orderkey', rightOn: 'o_orderkey' })
      .join(t.supplier.join(t.nation, { leftOn: 's_nationkey', rightOn: 'n_nationkey' }), { leftOn: 'l_suppkey', rightOn: 's_suppkey' })
      .withColumns({ o_year: col('o_orderdate').dt.year(), volume: disc() })
      .groupBy('o_year')
      .agg({ brazil: sum(when(col('n_name').eq('BRAZIL')).then(col('volume')).otherwise(0)), all: sum('volume') })
      .select(col('o_year'), col('brazil').divideBy(col('all')).alias('mkt_share'))
      .sortBy('o_year')
  },
  q9: (t) =>
    t.lineitem
      .join(t.part.filter(col('p_name').str.contains('green')), { leftOn: 'l_partkey', rightOn: 'p_partkey', how: 'semi' })
      .join(t.partsupp, { leftOn: ['l_partkey', 'l_suppkey'], rightOn: ['ps_partkey', 'ps_suppkey'] })
      .join(t.supplier.join(t.nation, { leftOn: 's_nationkey', rightOn: 'n_nationkey' }), { leftOn: 'l_suppkey', rightOn: 's_suppkey' })
      .join(t.orders, { leftOn: 'l_orderkey', rightOn: 'o_orderkey' })
      .withColumns({ nation: col('n_name'), o_year: col('o_orderdate').dt.year(), amount: disc().minus(f('ps_supplycost').multiplyBy(f('l_quantity'))) })
      .groupBy('nation', 'o_year')
      .agg({ sum_profit: sum('amount') })
      .sortBy(['nation', 'o_year'], desc([false, true])),
  q10: (t) =>
    t.customer
      .join(t.orders.filter(col('o_orderdate').gtEq('1993-10-01').and(col('o_orderdate').lt('1994-01-01'))), { leftOn: 'c_custkey', rightOn: 'o_custkey' })
      .join(t.lineitem.filter(col('l_returnflag').eq('R')), { leftOn: 'o_orderkey', rightOn: 'l_orderkey' })
      .join(t.nation, { leftOn: 'c_nationkey', rightOn: 'n_nationkey' })
      .withColumns({ c_acctbal: f('c_acctbal') })
      .groupBy('c_custkey', 'c_name', 'c_acctbal', 'c_phone', 'n_name', 'c_address', 'c_comment')
      .agg({ revenue: sum(disc()) })
      .select('c_custkey', 'c_name', 'revenue', 'c_acctbal', 'n_name', 'c_address', 'c_phone', 'c_comment')
      .sortBy('revenue', { descending: true })
      .head(20),
  q11: (t) => {
    const ps = t.partsupp
      .join(t.supplier.join(t.nation.filter(col('n_name').eq('GERMANY')), { leftOn: 's_nationkey', rightOn: 'n_nationkey' }), { leftOn: 'ps_suppkey', rightOn: 's_suppkey' })
      .withColumns({ v: f('ps_supplycost').multiplyBy(col('ps_availqty')) })
    const total = ps.agg({ total: sum('v') }).withColumns({ one: lit(1) })
    return ps
      .groupBy('ps_partkey')
      .agg({ value: sum('v') })
      .withColumns({ one: lit(1) })
      .join(total, { on: 'one' })
      .filter(col('value').gt(col('total').multiplyBy(0.0001)))
      .select('ps_partkey', 'value')
      .sortBy('value', { descending: true })
  },
  q12: (t) => {
    const high = col('o_orderpriority').isIn(['1-URGENT', '2-HIGH'])
    return t.orders
      .join(
        t.lineitem.filter(
          col('l_shipmode').isIn(['MAIL', 'SHIP']).and(col('l_commitdate').lt(col('l_receiptdate'))).and(col('l_shipdate').lt(col('l_commitdate'))).and(col('l_receiptdate').gtEq('1994-01-01')).and(col('l_receiptdate').lt('1995-01-01')),
        ),
        { leftOn: 'o_orderkey', rightOn: 'l_orderkey' },
      )
      .groupBy('l_shipmode')
      .agg({ high_line_count: sum(when(high).then(1).otherwise(0)), low_line_count: sum(when(high).then(0).otherwise(1)) })
      .sortBy('l_shipmode')
  },
  q13: (t) =>
    t.customer
      .join(t.orders.filter(col('o_comment').str.like('%special%requests%').not()), { leftOn: 'c_custkey', rightOn: 'o_custkey', how: 'left' })
      .groupBy('c_custkey')
      .agg({ c_count: count('o_orderkey') })
      .groupBy('c_count')
      .agg({ custdist: count() })
      .sortBy(['custdist', 'c_count'], { descending: true }),
  q14: (t) =>
    t.lineitem
      .filter(col('l_shipdate').gtEq('1995-09-01').and(col('l_shipdate').lt('1995-10-01')))
      .join(t.part, { leftOn: 'l_partkey', rightOn: 'p_partkey' })
      .agg({ promo: sum(when(col('p_type').str.startsWith('PROMO')).then(disc()).otherwise(0)), all: sum(disc()) })
      .select(lit(100).multiplyBy(col('promo')).divideBy(col('all')).alias('promo_revenue')),
  q15: (t) => {
    const revenue = t.lineitem
      .filter(col('l_shipdate').gtEq('1996-01-01').and(col('l_shipdate').lt('1996-04-01')))
      .groupBy('l_suppkey')
      .agg({ total_revenue: sum(disc()) })
    const top = revenue.agg({ top: max('total_revenue') })
    return t.supplier
      .join(revenue.join(top, { leftOn: 'total_revenue', rightOn: 'top', how: 'semi' }), { leftOn: 's_suppkey', rightOn: 'l_suppkey' })
      .select('s_suppkey', 's_name', 's_address', 's_phone', 'total_revenue')
      .sortBy('s_suppkey')
  },
  q16: (t) =>
    t.partsupp
      .join(t.supplier.filter(col('s_comment').str.like('%Customer%Complaints%')), { leftOn: 'ps_suppkey', rightOn: 's_suppkey', how: 'anti' })
      .join(t.part.filter(col('p_brand').neq('Brand#45').and(col('p_type').str.startsWith('MEDIUM POLISHED').not()).and(col('p_size').isIn([49, 14, 23, 45, 19, 3, 36, 9]))), { leftOn: 'ps_partkey', rightOn: 'p_partkey' })
      .groupBy('p_brand', 'p_type', 'p_size')
      .agg({ supplier_cnt: nUnique('ps_suppkey') })
      .sortBy(['supplier_cnt', 'p_brand', 'p_type', 'p_size'], desc([true, false, false, false])),
  q17: (t) => {
    const li = t.lineitem.join(t.part.filter(col('p_brand').eq('Brand#23').and(col('p_container').eq('MED BOX'))), { leftOn: 'l_partkey', rightOn: 'p_partkey', how: 'semi' })
    const avg = li.groupBy('l_partkey').agg({ avg_qty: mean(f('l_quantity')) })
    return li
      .join(avg, { on: 'l_partkey' })
      .filter(f('l_quantity').lt(col('avg_qty').multiplyBy(0.2)))
      .agg({ s: sum(f('l_extendedprice')) })
      .select(col('s').divideBy(7.0).alias('avg_yearly'))
  },
  q18: (t) => {
    const big = t.lineitem.groupBy('l_orderkey').agg({ q: sum(f('l_quantity')) }).filter(col('q').gt(300))
    return t.orders
      .join(big, { leftOn: 'o_orderkey', rightOn: 'l_orderkey', how: 'semi' })
      .join(t.customer, { leftOn: 'o_custkey', rightOn: 'c_custkey' })
      .join(t.lineitem, { leftOn: 'o_orderkey', rightOn: 'l_orderkey' })
      .withColumns({ o_totalprice: f('o_totalprice') })
      .groupBy('c_name', 'o_custkey', 'o_orderkey', 'o_orderdate', 'o_totalprice')
      .agg({ sum_qty: sum(f('l_quantity')) })
      .sortBy(['o_totalprice', 'o_orderdate'], desc([true, false]))
      .head(100)
  },
  q19: (t) => {
    const branch = (brand, containers, lo, size) =>
      col('p_brand').eq(brand).and(col('p_container').isIn(containers)).and(f('l_quantity').isBetween(lo, lo + 10)).and(col('p_size').isBetween(1, size))
    return t.lineitem
      .filter(col('l_shipmode').isIn(['AIR', 'AIR REG']).and(col('l_shipinstruct').eq('DELIVER IN PERSON')))
      .join(t.part, { leftOn: 'l_partkey', rightOn: 'p_partkey' })
      .filter(
        branch('Brand#12', ['SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'], 1, 5)
          .or(branch('Brand#23', ['MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'], 10, 10))
          .or(branch('Brand#34', ['LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'], 20, 15)),
      )
      .agg({ revenue: sum(disc()) })
  },
  q20: (t) => {
    const shipped = t.lineitem
      .filter(col('l_shipdate').gtEq('1994-01-01').and(col('l_shipdate').lt('1995-01-01')))
      .groupBy('l_partkey', 'l_suppkey')
      .agg({ q: sum(f('l_quantity')) })
    const ps = t.partsupp
      .join(t.part.filter(col('p_name').str.startsWith('forest')), { leftOn: 'ps_partkey', rightOn: 'p_partkey', how: 'semi' })
      .join(shipped, { leftOn: ['ps_partkey', 'ps_suppkey'], rightOn: ['l_partkey', 'l_suppkey'] })
      .filter(col('ps_availqty').gt(col('q').multiplyBy(0.5)))
    return t.supplier
      .join(t.nation.filter(col('n_name').eq('CANADA')), { leftOn: 's_nationkey', rightOn: 'n_nationkey', how: 'semi' })
      .join(ps, { leftOn: 's_suppkey', rightOn: 'ps_suppkey', how: 'semi' })
      .select('s_name', 's_address')
      .sortBy('s_name')
  },
  q21: (t) => {
    const late = t.lineitem.filter(col('l_receiptdate').gt(col('l_commitdate')))
    const several = t.lineitem.groupBy('l_orderkey').agg({ n: nUnique('l_suppkey') }).filter(col('n').gt(1))
    const alone = late.groupBy('l_orderkey').agg({ n: nUnique('l_suppkey') }).filter(col('n').eq(1))
    return late
      .join(several, { on: 'l_orderkey', how: 'semi' })
      .join(alone, { on: 'l_orderkey', how: 'semi' })
      .join(t.orders.filter(col('o_orderstatus').eq('F')), { leftOn: 'l_orderkey', rightOn: 'o_orderkey', how: 'semi' })
      .join(t.supplier.join(t.nation.filter(col('n_name').eq('SAUDI ARABIA')), { leftOn: 's_nationkey', rightOn: 'n_nationkey', how: 'semi' }), { leftOn: 'l_suppkey', rightOn: 's_suppkey' })
      .groupBy('s_name')
      .agg({ numwait: count() })
      .sortBy(['numwait', 's_name'], desc([true, false]))
      .head(100)
  },
  q22: (t) => {
    const codes = ['13', '31', '23', '29', '30', '18', '17']
    const cust = t.customer.withColumns({ cntrycode: col('c_phone').str.slice(0, 2), c_acctbal: f('c_acctbal') }).filter(col('cntrycode').isIn(codes))
    const avg = cust.filter(col('c_acctbal').gt(0)).agg({ avg_bal: mean('c_acctbal') }).withColumns({ one: lit(1) })
    return cust
      .join(t.orders, { leftOn: 'c_custkey', rightOn: 'o_custkey', how: 'anti' })
      .withColumns({ one: lit(1) })
      .join(avg, { on: 'one' })
      .filter(col('c_acctbal').gt(col('avg_bal')))
      .groupBy('cntrycode')
      .agg({ numcust: count(), totacctbal: sum('c_acctbal') })
      .sortBy('cntrycode')
  },
}

module.exports = { frames }
