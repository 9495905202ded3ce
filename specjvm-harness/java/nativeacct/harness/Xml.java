package nativeacct.harness;

import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import javax.xml.parsers.SAXParser;
import javax.xml.transform.stream.StreamSource;
import net.sf.saxon.s9api.Processor;
import net.sf.saxon.s9api.Serializer;
import net.sf.saxon.s9api.XdmNode;
import net.sf.saxon.s9api.XsltExecutable;
import net.sf.saxon.s9api.XsltTransformer;
import org.xml.sax.Attributes;
import org.xml.sax.helpers.DefaultHandler;

/**
 * xml: Saxon-HE compiles an XSLT 2.0 stylesheet (grouping, sorting, sums, string functions) and transforms a
 * generated order book; Xerces parses the document with SAX as well. {@code --size}: orders in the document.
 */
public final class Xml {
    private static final String STYLESHEET = """
            <xsl:stylesheet version="2.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
                xmlns:xs="http://www.w3.org/2001/XMLSchema">
              <xsl:output method="xml" indent="yes"/>
              <xsl:template match="/book">
                <report orders="{count(order)}">
                  <xsl:for-each-group select="order" group-by="@region">
                    <xsl:sort select="current-grouping-key()"/>
                    <region name="{current-grouping-key()}" orders="{count(current-group())}"
                        total="{format-number(sum(current-group()/line/(xs:decimal(@qty) * xs:decimal(@price))), '0.00')}">
                      <xsl:for-each-group select="current-group()/line" group-by="@sku">
                        <xsl:sort select="sum(current-group()/@qty)" data-type="number" order="descending"/>
                        <xsl:sort select="current-grouping-key()"/>
                        <xsl:if test="position() le 5">
                          <top sku="{current-grouping-key()}" qty="{sum(current-group()/@qty)}"
                               name="{upper-case(substring(current-group()[1]/@name, 1, 12))}"/>
                        </xsl:if>
                      </xsl:for-each-group>
                    </region>
                  </xsl:for-each-group>
                  <xsl:for-each select="order[note][position() mod 10 = 1]">
                    <xsl:sort select="@id" data-type="number"/>
                    <note id="{@id}" words="{count(tokenize(normalize-space(note), ' '))}">
                      <xsl:value-of select="replace(substring(note, 1, 40), '[aeiou]', '*')"/>
                    </note>
                  </xsl:for-each>
                </report>
              </xsl:template>
            </xsl:stylesheet>
            """;

    public static void main(String[] args) throws Exception {
        int orders = Common.size(args, 20000);
        int rounds = Integer.parseInt(Common.option(args, "--rounds", "3"));
        String document = document(orders);
        byte[] documentBytes = document.getBytes(StandardCharsets.UTF_8);
        long t0 = Common.start();
        Processor saxon = new Processor(false);
        XsltExecutable stylesheet = saxon.newXsltCompiler().compile(new StreamSource(new StringReader(STYLESHEET)));
        long digest = 0;
        int length = 0;
        long elements = 0;
        for (int round = 0; round < rounds; round++) {
            XdmNode source = saxon.newDocumentBuilder().build(new StreamSource(new ByteArrayInputStream(documentBytes)));
            XsltTransformer transformer = stylesheet.load();
            StringWriter out = new StringWriter();
            Serializer serializer = saxon.newSerializer(out);
            transformer.setInitialContextNode(source);
            transformer.setDestination(serializer);
            transformer.transform();
            String result = out.toString();
            digest = Common.digest(0, result);
            length = result.length();
            elements = countElements(documentBytes);
        }
        Common.finish("xml", t0);
        System.out.println("xml: document " + documentBytes.length + " bytes, " + elements + " elements; report "
                + length + " chars, digest " + Common.hex(digest));
    }

    /** Parses with Xerces' own SAX implementation (not the JDK's internal copy). */
    static long countElements(byte[] document) throws Exception {
        SAXParser parser = new org.apache.xerces.jaxp.SAXParserFactoryImpl().newSAXParser();
        long[] count = {0};
        parser.parse(new ByteArrayInputStream(document), new DefaultHandler() {
            @Override
            public void startElement(String uri, String localName, String qName, Attributes attributes) {
                count[0]++;
            }
        });
        return count[0];
    }

    static String document(int orders) {
        SplittableRandom random = new SplittableRandom(2008L);
        String[] words = Common.vocabulary(5L, 800);
        StringBuilder xml = new StringBuilder(orders * 400);
        xml.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<book>\n");
        for (int i = 0; i < orders; i++) {
            xml.append("  <order id=\"").append(i).append("\" region=\"").append(Sql.REGIONS[random.nextInt(Sql.REGIONS.length)])
                    .append("\" customer=\"c").append(random.nextInt(orders / 4 + 1)).append("\">\n");
            int lines = 1 + random.nextInt(5);
            for (int l = 0; l < lines; l++) {
                int sku = random.nextInt(300);
                xml.append("    <line sku=\"s").append(sku).append("\" name=\"").append(words[sku % words.length])
                        .append(" &amp; ").append(words[(sku * 7) % words.length]).append("\" qty=\"").append(1 + random.nextInt(9))
                        .append("\" price=\"").append(random.nextInt(10000) / 100).append('.').append(10 + random.nextInt(90))
                        .append("\"/>\n");
            }
            if (random.nextInt(3) == 0) {
                xml.append("    <note>");
                int n = 5 + random.nextInt(20);
                for (int w = 0; w < n; w++) {
                    xml.append(words[random.nextInt(words.length)]).append(' ');
                }
                xml.append("</note>\n");
            }
            xml.append("  </order>\n");
        }
        xml.append("</book>\n");
        return xml.toString();
    }
}
