package nativeacct.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * derby: the same order-entry SQL workload on Apache Derby, embedded, with an in-memory database. Derby
 * compiles each statement to bytecode at run time, which db (H2) does not. {@code --size}: customers.
 */
public final class Derby {
    public static void main(String[] args) throws Exception {
        int customers = Common.size(args, 10000);
        Path home = Files.createTempDirectory("nativeacct-derby");
        System.setProperty("derby.system.home", home.toString());
        System.setProperty("derby.stream.error.file", home.resolve("derby.log").toString());
        long t0 = Common.start();
        try (Connection db = DriverManager.getConnection("jdbc:derby:memory:nativeacct;create=true")) {
            Sql.run(db, customers, "derby");
        }
        try {
            DriverManager.getConnection("jdbc:derby:;shutdown=true").close();
        } catch (SQLException expected) {
            // Derby reports a clean engine shutdown as SQLState XJ015.
            if (!"XJ015".equals(expected.getSQLState())) {
                throw expected;
            }
        }
        Common.finish("derby", t0);
        Files.deleteIfExists(home.resolve("derby.log"));
        Files.deleteIfExists(home);
    }
}
