//! A TPC-C log generator: the row changes of the TPC-C transaction mix for W
//! warehouses, with every row placed on an 8 KB page of its table.
//!
//! **Followed from the TPC-C specification (revision 5):** the mix (New-Order 45%,
//! Payment 43%, Order-Status, Delivery and Stock-Level 4% each), the tables'
//! cardinalities per warehouse (10 districts, 30,000 customers, 30,000 history
//! rows, 30,000 orders, 9,000 new-orders, 300,000 order-lines, 100,000 stock rows;
//! 100,000 items in all), their row sizes (warehouse 89 B, district 95, customer 655,
//! history 46, new-order 8, order 24, order-line 54, item 82, stock 306), NURand
//! skew (customers NURand(1023, 1, 3000), items NURand(8191, 1, 100000), the constant
//! C drawn once per run), 5–15 lines per order, 1% remote supply warehouses, 15%
//! remote payment customers, Delivery's ten districts, Stock-Level's last 20 orders.
//!
//! **Assumed (not in the specification, stated here):** a record's header is 40 B;
//! an insert logs the full row, an update the after-image of the columns the
//! transaction changes (warehouse and district year-to-date 8 B, next order id 4 B,
//! customer payment 20 B plus 500 B of C_DATA for the 10% bad-credit customers,
//! stock 20 B, carrier 4 B, delivery date 8 B, customer delivery 12 B), a delete the
//! 8 B key; a page holds (8192 − 96) / (row + 4) rows (96 B page header, 4 B slot);
//! inserted rows are appended at their table's end (a heap); the 1% of New-Orders
//! the specification rolls back are not generated; customers chosen by last name
//! are drawn with NURand(1023) like those chosen by number; Order-Status reads its
//! district's newest order; a Stock-Level reads 200 stock rows drawn like New-Order's
//! items. Read-only work (item, warehouse, customer and stock reads) is reported as
//! page reads, for the primary's buffer pool; it writes no log.

use crate::log::{LogRecord, Lsn, PageId, RecordId, RecordKind, PAGE_BYTES};
use spinstack_sim::rng::Xoshiro256StarStar;
use std::collections::VecDeque;

/// Bytes of every record's header.
pub const HEADER_BYTES: u32 = 40;
const PAGE_HEADER_BYTES: u64 = 96;
const SLOT_BYTES: u64 = 4;

/// The TPC-C tables, in the order their pages are laid out (the growing tables
/// last, order-lines at the very end so its growth needs no bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Table {
    Warehouse = 0,
    District = 1,
    Item = 2,
    Customer = 3,
    Stock = 4,
    Order = 5,
    NewOrder = 6,
    History = 7,
    OrderLine = 8,
}

const TABLES: [Table; 9] = [
    Table::Warehouse,
    Table::District,
    Table::Item,
    Table::Customer,
    Table::Stock,
    Table::Order,
    Table::NewOrder,
    Table::History,
    Table::OrderLine,
];

impl Table {
    /// Row size from the specification's table layouts.
    pub fn row_bytes(self) -> u64 {
        match self {
            Table::Warehouse => 89,
            Table::District => 95,
            Table::Item => 82,
            Table::Customer => 655,
            Table::Stock => 306,
            Table::Order => 24,
            Table::NewOrder => 8,
            Table::History => 46,
            Table::OrderLine => 54,
        }
    }
    /// Rows at load time for `warehouses` warehouses.
    pub fn initial_rows(self, warehouses: u64) -> u64 {
        match self {
            Table::Warehouse => warehouses,
            Table::District => warehouses * 10,
            Table::Item => 100_000,
            Table::Customer | Table::Order | Table::History => warehouses * 30_000,
            Table::Stock => warehouses * 100_000,
            Table::NewOrder => warehouses * 9_000,
            Table::OrderLine => warehouses * 300_000,
        }
    }
    pub fn rows_per_page(self) -> u64 {
        (PAGE_BYTES - PAGE_HEADER_BYTES) / (self.row_bytes() + SLOT_BYTES)
    }
}

/// Where each table's pages start.
#[derive(Clone, Debug)]
pub struct PageLayout {
    base: [u64; 9],
    /// Pages of the tables at load time plus the room reserved for growth
    /// (order-lines may grow past it).
    pub pages: u64,
}

impl PageLayout {
    /// Room for `transactions` transactions' inserts (each inserts at most one
    /// order, new-order and history row; order-lines grow at the end).
    pub fn new(warehouses: u64, transactions: u64) -> PageLayout {
        let mut base = [0; 9];
        let mut next = 0;
        for table in TABLES {
            base[table as usize] = next;
            let growth = match table {
                Table::Order | Table::NewOrder | Table::History => transactions,
                Table::OrderLine => transactions.saturating_mul(15),
                _ => 0,
            };
            let rows = table.initial_rows(warehouses) + growth;
            next += rows.div_ceil(table.rows_per_page());
        }
        PageLayout { base, pages: next }
    }
    pub fn page(&self, table: Table, row: u64) -> PageId {
        PageId(self.base[table as usize] + row / table.rows_per_page())
    }
}

/// Which transaction of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

/// Where the generator sends what a transaction does.
pub trait Sink {
    /// A row change, in LSN order.
    fn record(&mut self, record: LogRecord);
    /// A page read without a change (for the primary's buffer pool).
    fn read(&mut self, _page: PageId) {}
    /// The transaction is complete (read-only ones included).
    fn end_transaction(&mut self, _kind: TransactionKind) {}
}

impl Sink for Vec<LogRecord> {
    fn record(&mut self, record: LogRecord) {
        self.push(record);
    }
}

#[derive(Clone, Copy, Debug)]
struct Order {
    order_row: u64,
    new_order_row: u64,
    first_line_row: u64,
    lines: u8,
    customer_row: u64,
}

/// The generator's state: the rows inserted so far and each district's
/// undelivered orders.
pub struct Tpcc {
    warehouses: u64,
    transactions_left: u64,
    layout: PageLayout,
    rng: Xoshiro256StarStar,
    c_customer: u64,
    c_item: u64,
    next_lsn: u64,
    next_transaction: u64,
    /// Rows of each table so far (the next insert's row number).
    rows: [u64; 9],
    undelivered: Vec<VecDeque<Order>>,
    newest: Vec<Order>,
    pending: Vec<LogRecord>,
}

impl Tpcc {
    /// A generator of `transactions` transactions for `warehouses` warehouses (at
    /// least 1), deterministic by `seed`.
    pub fn new(warehouses: u32, transactions: u64, seed: u64) -> Tpcc {
        let warehouses = u64::from(warehouses.max(1));
        let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
        let c_customer = rng.below(1024);
        let c_item = rng.below(8192);
        let mut rows = [0; 9];
        for table in TABLES {
            rows[table as usize] = table.initial_rows(warehouses);
        }
        // Load state: orders 1..3000 of each district, the last 900 undelivered;
        // initial orders are laid out with 10 order-line slots each.
        let districts = (warehouses * 10) as usize;
        let mut undelivered = Vec::with_capacity(districts);
        let mut newest = Vec::with_capacity(districts);
        for district in 0..districts as u64 {
            let order = |o: u64| Order {
                order_row: district * 3000 + o,
                new_order_row: district * 900 + o.saturating_sub(2100),
                first_line_row: (district * 3000 + o) * 10,
                lines: 10,
                customer_row: district * 3000 + o,
            };
            undelivered.push((2100..3000).map(order).collect());
            newest.push(order(2999));
        }
        Tpcc {
            warehouses,
            transactions_left: transactions,
            layout: PageLayout::new(warehouses, transactions),
            rng,
            c_customer,
            c_item,
            next_lsn: 0,
            next_transaction: 0,
            rows,
            undelivered,
            newest,
            pending: Vec::with_capacity(64),
        }
    }

    pub fn layout(&self) -> &PageLayout {
        &self.layout
    }

    /// Pages the database occupies now (order-lines grow).
    pub fn pages_in_use(&self) -> u64 {
        self.layout
            .page(Table::OrderLine, self.rows[Table::OrderLine as usize])
            .0
            + 1
    }

    fn uniform(&mut self, low: u64, high: u64) -> u64 {
        low + self.rng.below(high - low + 1)
    }

    fn nurand(&mut self, a: u64, low: u64, high: u64, c: u64) -> u64 {
        let r = self.rng.below(a + 1) | self.uniform(low, high);
        ((r + c) % (high - low + 1)) + low
    }

    fn customer(&mut self) -> u64 {
        self.nurand(1023, 1, 3000, self.c_customer) - 1
    }

    fn item(&mut self) -> u64 {
        self.nurand(8191, 1, 100_000, self.c_item) - 1
    }

    fn change(&mut self, kind: RecordKind, table: Table, row: u64, payload: u64) {
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        self.pending.push(LogRecord {
            lsn: Lsn(lsn),
            record: RecordId::new(table as u8, row),
            page: self.layout.page(table, row),
            bytes: HEADER_BYTES + payload as u32,
            kind,
            ends_transaction: false,
        });
    }

    fn insert(&mut self, table: Table) -> u64 {
        let row = self.rows[table as usize];
        self.rows[table as usize] += 1;
        self.change(RecordKind::Insert, table, row, table.row_bytes());
        row
    }

    fn read<S: Sink>(&self, sink: &mut S, table: Table, row: u64) {
        sink.read(self.layout.page(table, row));
    }

    /// Generate the next transaction into `sink`; `None` when the budget is spent.
    pub fn next_transaction<S: Sink>(&mut self, sink: &mut S) -> Option<TransactionKind> {
        if self.transactions_left == 0 {
            return None;
        }
        self.transactions_left -= 1;
        let draw = self.rng.below(100);
        let warehouse = self.rng.below(self.warehouses);
        let kind = match draw {
            0..45 => {
                self.new_order(sink, warehouse);
                TransactionKind::NewOrder
            }
            45..88 => {
                self.payment(sink, warehouse);
                TransactionKind::Payment
            }
            88..92 => {
                self.order_status(sink, warehouse);
                TransactionKind::OrderStatus
            }
            92..96 => {
                self.delivery(warehouse);
                TransactionKind::Delivery
            }
            _ => {
                self.stock_level(sink, warehouse);
                TransactionKind::StockLevel
            }
        };
        if let Some(last) = self.pending.last_mut() {
            last.ends_transaction = true;
        }
        for record in self.pending.drain(..) {
            sink.record(record);
        }
        sink.end_transaction(kind);
        self.next_transaction += 1;
        Some(kind)
    }

    fn new_order<S: Sink>(&mut self, sink: &mut S, warehouse: u64) {
        let district = warehouse * 10 + self.rng.below(10);
        let customer_row = district * 3000 + self.customer();
        self.read(sink, Table::Warehouse, warehouse);
        self.read(sink, Table::Customer, customer_row);
        self.change(RecordKind::Update, Table::District, district, 4);
        let order_row = self.insert(Table::Order);
        let new_order_row = self.insert(Table::NewOrder);
        let lines = self.uniform(5, 15);
        let first_line_row = self.rows[Table::OrderLine as usize];
        for _ in 0..lines {
            let item = self.item();
            let supplier = if self.warehouses > 1 && self.rng.below(100) == 0 {
                (warehouse + 1 + self.rng.below(self.warehouses - 1)) % self.warehouses
            } else {
                warehouse
            };
            self.read(sink, Table::Item, item);
            self.change(
                RecordKind::Update,
                Table::Stock,
                supplier * 100_000 + item,
                20,
            );
            self.insert(Table::OrderLine);
        }
        let order = Order {
            order_row,
            new_order_row,
            first_line_row,
            lines: lines as u8,
            customer_row,
        };
        self.undelivered[district as usize].push_back(order);
        self.newest[district as usize] = order;
    }

    fn payment<S: Sink>(&mut self, sink: &mut S, warehouse: u64) {
        let district = warehouse * 10 + self.rng.below(10);
        let customer_district = if self.warehouses > 1 && self.rng.below(100) < 15 {
            let other = (warehouse + 1 + self.rng.below(self.warehouses - 1)) % self.warehouses;
            other * 10 + self.rng.below(10)
        } else {
            district
        };
        let customer_row = customer_district * 3000 + self.customer();
        self.change(RecordKind::Update, Table::Warehouse, warehouse, 8);
        self.change(RecordKind::Update, Table::District, district, 8);
        let bad_credit = self.rng.below(10) == 0;
        let payload = if bad_credit { 520 } else { 20 };
        self.read(sink, Table::Customer, customer_row);
        self.change(RecordKind::Update, Table::Customer, customer_row, payload);
        self.insert(Table::History);
    }

    fn order_status<S: Sink>(&mut self, sink: &mut S, warehouse: u64) {
        let district = warehouse * 10 + self.rng.below(10);
        let customer_row = district * 3000 + self.customer();
        self.read(sink, Table::Customer, customer_row);
        let order = self.newest[district as usize];
        self.read(sink, Table::Order, order.order_row);
        for line in 0..u64::from(order.lines) {
            self.read(sink, Table::OrderLine, order.first_line_row + line);
        }
    }

    fn delivery(&mut self, warehouse: u64) {
        for district in warehouse * 10..warehouse * 10 + 10 {
            let Some(order) = self.undelivered[district as usize].pop_front() else {
                continue;
            };
            self.change(RecordKind::Delete, Table::NewOrder, order.new_order_row, 8);
            self.change(RecordKind::Update, Table::Order, order.order_row, 4);
            for line in 0..u64::from(order.lines) {
                self.change(
                    RecordKind::Update,
                    Table::OrderLine,
                    order.first_line_row + line,
                    8,
                );
            }
            self.change(RecordKind::Update, Table::Customer, order.customer_row, 12);
        }
    }

    fn stock_level<S: Sink>(&mut self, sink: &mut S, warehouse: u64) {
        let district = warehouse * 10 + self.rng.below(10);
        self.read(sink, Table::District, district);
        for _ in 0..200 {
            let item = self.item();
            self.read(sink, Table::Stock, warehouse * 100_000 + item);
        }
    }

    /// Every remaining transaction's records, in LSN order.
    pub fn generate_all(mut self) -> Vec<LogRecord> {
        let mut records = Vec::with_capacity((self.transactions_left * 18) as usize);
        while self.next_transaction(&mut records).is_some() {}
        records
    }
}
