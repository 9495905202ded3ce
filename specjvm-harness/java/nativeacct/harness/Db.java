package nativeacct.harness;

import java.sql.Connection;
import java.sql.DriverManager;

/** db: the order-entry SQL workload on H2, in memory. {@code --size} is the number of customers. */
public final class Db {
    public static void main(String[] args) throws Exception {
        int customers = Common.size(args, 10000);
        long t0 = Common.start();
        try (Connection db = DriverManager.getConnection("jdbc:h2:mem:nativeacct;DB_CLOSE_DELAY=0", "sa", "")) {
            Sql.run(db, customers, "db");
        }
        Common.finish("db", t0);
    }
}
