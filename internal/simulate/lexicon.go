package simulate

import (
	"strconv"
	"strings"
)

// typeSynonyms is the object-type balance table of the action-space document (its Chinese
// synonyms), with English words of the same scope. A mention of any of them refers to an
// object of the type when it is the scene's only object of that type.
var typeSynonyms = map[string]struct{ en, zh []string }{
	"person":    {[]string{"person", "man", "woman", "pedestrian", "people"}, []string{"人", "行人", "男子", "女子"}},
	"vehicle":   {[]string{"vehicle", "car", "truck", "bicycle", "bike"}, []string{"车", "汽车", "卡车", "自行车"}},
	"animal":    {[]string{"animal", "dog", "cat", "bird"}, []string{"动物", "狗", "猫", "鸟"}},
	"furniture": {[]string{"furniture", "chair", "table", "sofa", "bench"}, []string{"家具", "椅子", "桌子", "沙发", "长椅"}},
	"food":      {[]string{"food", "fruit", "vegetable"}, []string{"食物", "水果", "蔬菜"}},
	"building":  {[]string{"building", "house", "shop", "store"}, []string{"建筑", "房子", "商店"}},
	"plant":     {[]string{"plant", "tree", "flower"}, []string{"植物", "树", "花"}},
}

// typeWord is how a user turn names a type ("the person", "那个人").
func typeWord(t string, lang Language) string {
	if s, ok := typeSynonyms[t]; ok {
		if lang == Chinese {
			return s.zh[0]
		}
		return s.en[0]
	}
	return strings.ReplaceAll(t, "_", " ")
}

// colors are the values of the color attribute the simulator recognises and plants, each
// with its English and Chinese words; the first of each is how it is written.
var colors = []struct {
	key    string
	en, zh []string
}{
	{"red", []string{"red"}, []string{"红色", "红"}},
	{"blue", []string{"blue"}, []string{"蓝色", "蓝"}},
	{"green", []string{"green"}, []string{"绿色", "绿"}},
	{"yellow", []string{"yellow"}, []string{"黄色", "黄"}},
	{"black", []string{"black"}, []string{"黑色", "黑"}},
	{"white", []string{"white"}, []string{"白色", "白"}},
	{"grey", []string{"grey", "gray"}, []string{"灰色", "灰"}},
	{"brown", []string{"brown"}, []string{"棕色", "褐色", "棕"}},
	{"orange", []string{"orange"}, []string{"橙色", "橘色"}},
	{"pink", []string{"pink"}, []string{"粉色", "粉红色"}},
	{"purple", []string{"purple"}, []string{"紫色", "紫"}},
}

// colorKey returns the color a word names, or "".
func colorKey(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, c := range colors {
		for _, w := range c.en {
			if v == w {
				return c.key
			}
		}
		for _, w := range c.zh {
			if v == w {
				return c.key
			}
		}
	}
	return ""
}

// canonical is the value a word stands for: the color it names, or the word in lower case.
func canonical(v string) string {
	if k := colorKey(v); k != "" {
		return k
	}
	return strings.ToLower(strings.TrimSpace(v))
}

// valueWords are the words that state a value (every word of a color).
func valueWords(v string) []string {
	if k := colorKey(v); k != "" {
		for _, c := range colors {
			if c.key == k {
				return append(append([]string{}, c.en...), c.zh...)
			}
		}
	}
	return []string{strings.ToLower(strings.TrimSpace(v))}
}

// opposites give a wrong value for attributes with a small closed set of values.
var opposites = map[string]string{
	"left": "right", "right": "left", "top": "bottom", "bottom": "top", "big": "small", "small": "big",
	"large": "small", "tall": "short", "short": "tall", "open": "closed", "closed": "open", "wet": "dry", "dry": "wet",
	"左边": "右边", "右边": "左边", "左": "右", "右": "左", "上方": "下方", "下方": "上方", "大": "小", "小": "大",
	"高": "矮", "矮": "高", "撑开": "收起", "收起": "撑开", "湿": "干", "干": "湿", "潮湿": "干燥", "干燥": "潮湿",
}

// attributeNamesZh names attributes in Chinese user turns; other attributes keep their key.
var attributeNamesZh = map[string]string{
	"color": "颜色", "position": "位置", "size": "大小", "material": "材质", "count": "数量", "state": "状态",
	"clothing": "穿着", "pose": "姿态", "direction": "方向", "shape": "形状", "kind": "种类", "height": "高度",
	"age": "年龄", "hair": "发型", "brand": "品牌", "weather": "天气", "surface": "表面",
}

// attributeName is how a user turn names an attribute.
func attributeName(a string, lang Language) string {
	if lang == Chinese {
		if s, ok := attributeNamesZh[a]; ok {
			return s
		}
	}
	return strings.ReplaceAll(a, "_", " ")
}

// baseName turns an object id into words: person_1 -> person, red_car -> red car.
func baseName(id string) string {
	parts := strings.Split(id, "_")
	if n := len(parts); n > 1 {
		if _, err := strconv.Atoi(parts[n-1]); err == nil {
			parts = parts[:n-1]
		}
	}
	return strings.Join(parts, " ")
}

// displayName is how user turns and expected answers name an object.
func displayName(o *Object, lang Language) string {
	if o.Name != "" {
		return o.Name
	}
	if lang == Chinese {
		if s, ok := typeSynonyms[o.Type]; ok {
			return s.zh[0]
		}
	}
	return baseName(o.ID)
}
