package nativeacct.harness;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.SplittableRandom;

/**
 * The SQL workload shared by db (H2) and derby (Derby embedded): an order-entry schema filled with seeded
 * rows, then a mix of point lookups, joins, aggregates, updates and deletes in transactions. Only standard
 * SQL that both engines accept.
 */
final class Sql {
    private Sql() {}

    static final String[] REGIONS = {"north", "south", "east", "west", "centre", "islands", "coast", "hills"};

    /** Runs the whole workload on {@code db}; {@code customers} scales everything. Returns a result digest. */
    static long run(Connection db, int customers, String label) throws SQLException {
        SplittableRandom random = new SplittableRandom(424242L);
        String[] names = Common.vocabulary(99L, 2000);
        long digest = 0;
        db.setAutoCommit(false);
        try (Statement s = db.createStatement()) {
            s.executeUpdate("CREATE TABLE customer (id INT PRIMARY KEY, name VARCHAR(64), region VARCHAR(16), credit DECIMAL(12,2))");
            s.executeUpdate("CREATE TABLE product (id INT PRIMARY KEY, title VARCHAR(64), price DECIMAL(10,2), stock INT)");
            s.executeUpdate("CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, product_id INT, quantity INT, order_day INT, status VARCHAR(8))");
            s.executeUpdate("CREATE INDEX orders_customer ON orders (customer_id)");
            s.executeUpdate("CREATE INDEX orders_day ON orders (order_day)");
        }
        int products = Math.max(50, customers / 10);
        try (PreparedStatement p = db.prepareStatement("INSERT INTO customer VALUES (?, ?, ?, ?)")) {
            for (int i = 0; i < customers; i++) {
                p.setInt(1, i);
                p.setString(2, names[random.nextInt(names.length)] + " " + names[random.nextInt(names.length)]);
                p.setString(3, REGIONS[random.nextInt(REGIONS.length)]);
                p.setBigDecimal(4, java.math.BigDecimal.valueOf(random.nextInt(1_000_000), 2));
                p.addBatch();
                if (i % 500 == 499) {
                    p.executeBatch();
                }
            }
            p.executeBatch();
        }
        try (PreparedStatement p = db.prepareStatement("INSERT INTO product VALUES (?, ?, ?, ?)")) {
            for (int i = 0; i < products; i++) {
                p.setInt(1, i);
                p.setString(2, names[random.nextInt(names.length)]);
                p.setBigDecimal(3, java.math.BigDecimal.valueOf(100 + random.nextInt(50_000), 2));
                p.setInt(4, random.nextInt(1000));
                p.addBatch();
            }
            p.executeBatch();
        }
        int orders = customers * 8;
        try (PreparedStatement p = db.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)")) {
            for (int i = 0; i < orders; i++) {
                p.setInt(1, i);
                p.setInt(2, random.nextInt(customers));
                p.setInt(3, random.nextInt(products));
                p.setInt(4, 1 + random.nextInt(20));
                p.setInt(5, random.nextInt(365));
                p.setString(6, random.nextInt(10) == 0 ? "open" : "done");
                p.addBatch();
                if (i % 500 == 499) {
                    p.executeBatch();
                }
            }
            p.executeBatch();
        }
        db.commit();

        // Reports over the whole data set.
        String[] reports = {
            "SELECT c.region, COUNT(*), SUM(o.quantity) FROM orders o JOIN customer c ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region",
            "SELECT p.id, SUM(o.quantity * p.price) AS revenue FROM orders o JOIN product p ON o.product_id = p.id GROUP BY p.id ORDER BY revenue DESC, p.id FETCH FIRST 20 ROWS ONLY",
            "SELECT order_day, COUNT(*) FROM orders WHERE status = 'open' GROUP BY order_day ORDER BY order_day",
            "SELECT c.id, c.name, COUNT(o.id) FROM customer c LEFT JOIN orders o ON o.customer_id = c.id WHERE c.credit > 9000 GROUP BY c.id, c.name ORDER BY c.id",
        };
        try (Statement s = db.createStatement()) {
            for (String q : reports) {
                digest = digestQuery(s.executeQuery(q), digest);
            }
        }

        // An OLTP-like mix: lookups by key and index, stock updates, order inserts, occasional deletes.
        int transactions = customers * 2;
        int nextOrder = orders;
        try (PreparedStatement byCustomer = db.prepareStatement(
                        "SELECT o.id, o.quantity, p.price FROM orders o JOIN product p ON o.product_id = p.id WHERE o.customer_id = ? ORDER BY o.id");
                PreparedStatement customer = db.prepareStatement("SELECT name, credit FROM customer WHERE id = ?");
                PreparedStatement stock = db.prepareStatement("UPDATE product SET stock = stock - ? WHERE id = ?");
                PreparedStatement insert = db.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)");
                PreparedStatement close = db.prepareStatement("UPDATE orders SET status = 'done' WHERE customer_id = ? AND status = 'open'");
                PreparedStatement remove = db.prepareStatement("DELETE FROM orders WHERE order_day = ? AND quantity = ?")) {
            for (int t = 0; t < transactions; t++) {
                int c = random.nextInt(customers);
                customer.setInt(1, c);
                digest = digestQuery(customer.executeQuery(), digest);
                byCustomer.setInt(1, c);
                digest = digestQuery(byCustomer.executeQuery(), digest);
                int product = random.nextInt(products);
                int quantity = 1 + random.nextInt(5);
                stock.setInt(1, quantity);
                stock.setInt(2, product);
                stock.executeUpdate();
                insert.setInt(1, nextOrder++);
                insert.setInt(2, c);
                insert.setInt(3, product);
                insert.setInt(4, quantity);
                insert.setInt(5, random.nextInt(365));
                insert.setString(6, "open");
                insert.executeUpdate();
                if (t % 7 == 0) {
                    close.setInt(1, c);
                    digest = Common.digest(digest, close.executeUpdate());
                }
                if (t % 200 == 0) {
                    remove.setInt(1, random.nextInt(365));
                    remove.setInt(2, 1 + random.nextInt(20));
                    digest = Common.digest(digest, remove.executeUpdate());
                }
                if (t % 20 == 19) {
                    db.commit();
                }
            }
        }
        db.commit();
        try (Statement s = db.createStatement()) {
            digest = digestQuery(s.executeQuery("SELECT COUNT(*), SUM(quantity), MIN(id), MAX(id) FROM orders"), digest);
            digest = digestQuery(s.executeQuery("SELECT SUM(stock) FROM product"), digest);
        }
        db.commit();
        System.out.println(label + ": customers " + customers + " orders " + orders + " transactions " + transactions
                + " digest " + Common.hex(digest));
        return digest;
    }

    /** Folds every column of every row into the digest, as text, so both engines agree on the value. */
    static long digestQuery(ResultSet rows, long digest) throws SQLException {
        try (rows) {
            ResultSetMetaData meta = rows.getMetaData();
            int columns = meta.getColumnCount();
            while (rows.next()) {
                for (int i = 1; i <= columns; i++) {
                    Object value = rows.getObject(i);
                    String text = value instanceof java.math.BigDecimal
                            ? ((java.math.BigDecimal) value).stripTrailingZeros().toPlainString()
                            : String.valueOf(value);
                    digest = Common.digest(digest, text);
                }
            }
        }
        return digest;
    }
}
