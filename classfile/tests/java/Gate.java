/** Empty helper owner: the rewriter injects the gate field, begin/end and the beginN/endN natives. */
public class Gate {
}
