import CoatyModel
import Testing

struct AnyCodableDescriptionTests {
    @Test func printsAsCompactJSON() {
        let value: AnyCodable = ["b": [1, 2.5, nil, true], "a": "x/y"]
        #expect("\(value)" == #"{"a":"x/y","b":[1,2.5,null,true]}"#)
        #expect(String(describing: AnyCodable.string("hi")) == #""hi""#)
        #expect("\(AnyCodable.uint(.max))" == "18446744073709551615")
    }
}
